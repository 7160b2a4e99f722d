package dev.outboxkit.relay.cdc.internal;

import java.util.Map;
import java.util.Objects;

/**
 * Where a Debezium record sits in the WAL stream, read from its source offset.
 *
 * <p>The relay stores only one kind of offset: <b>the last change of a transaction that is known to be
 * complete</b> (a later record belongs to another transaction, or Debezium's heartbeat shows the COMMIT
 * was read). Two Debezium 3.6.1 resume bugs make every other position unsafe:
 * <ul>
 *   <li>several changes can share one LSN (COPY writes rows in groups); an offset in the middle of such a
 *       group makes Debezium skip the rest of it (fixed upstream in 3.7, debezium#7531). The last change of a
 *       complete transaction has no unprocessed neighbour.</li>
 *   <li>an offset at a COMMIT stores the commit's end LSN, which is also where the next WAL record starts;
 *       if that record is a change of a transaction that began earlier and commits later (any concurrent
 *       writer), Debezium takes it for the stored event and skips that transaction's earlier changes. A
 *       change's own LSN cannot be mistaken for another transaction's change. ({@code LargeTransactionTest}
 *       lost rows this way before the relay stopped storing COMMIT positions.)</li>
 * </ul>
 * {@link #boundary()} positions (after a COMMIT) only prove completion; a non-transactional logical
 * message is its own transaction. Records without a processed position (the initial offset Debezium
 * makes up before streaming: the WAL's end at start-up) are never used.
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

    /** Right after a COMMIT was read (Debezium's heartbeat): the transaction before it is complete. */
    boolean isCommit() {
        return "COMMIT".equals(messageType);
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
