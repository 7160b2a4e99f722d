package dev.outboxkit.relay.cdc.internal;

import java.util.Map;
import java.util.Objects;

/**
 * Where a Debezium record sits in the WAL stream, read from its source offset.
 *
 * <p>The relay commits offsets only at <em>transaction boundaries</em>. Debezium 3.6.1 resumes after
 * the stored change LSN, and several changes can share one LSN (COPY, multi-inserts): resuming in the
 * middle of such a group skips the rest of it (fixed upstream in 3.7, debezium#7531). An offset at a
 * boundary is never in the middle of anything:
 * <ul>
 *   <li>{@link #boundary()}: a record emitted right after a COMMIT (Debezium's heartbeat carries the
 *       commit position), or a non-transactional logical message (its own commit);</li>
 *   <li>the last record of a transaction, once a record of another transaction shows it is complete
 *       ({@link #inTransaction()} and {@link #txId()} changes).</li>
 * </ul>
 * Records without a processed position (the initial offset Debezium makes up before streaming) are
 * never used: their LSN is the WAL's end at start-up, not a point the relay has reached.
 */
record Position(Long txId, String messageType, Long lsn, Long lsnProc, Long lsnCommit) {

    static Position of(Map<String, ?> offset) {
        if (offset == null) {
            return new Position(null, null, null, null, null);
        }
        return new Position(number(offset.get("txId")), offset.get("messageType") == null ? null : offset.get("messageType").toString(),
                number(offset.get("lsn")), number(offset.get("lsn_proc")), number(offset.get("lsn_commit")));
    }

    private static Long number(Object o) {
        return o instanceof Number n ? n.longValue() : null;
    }

    /** Everything up to and including this position is complete: a safe offset by itself. */
    boolean boundary() {
        if ("COMMIT".equals(messageType)) {
            return lsnCommit != null && lsnProc != null;
        }
        return "MESSAGE".equals(messageType) && txId == null && lsnCommit != null && Objects.equals(lsnCommit, lsnProc);
    }

    /** A position inside transaction {@link #txId()}: safe as an offset only once that transaction is complete. */
    boolean inTransaction() {
        if (txId == null || lsnProc == null || messageType == null) {
            return false;
        }
        return switch (messageType) {
            case "BEGIN", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "MESSAGE" -> true;
            default -> false;
        };
    }

    /** The commit LSN reached so far (the last transaction completely read before this record). */
    long commitLsn() {
        return lsnCommit == null ? -1 : lsnCommit;
    }
}
