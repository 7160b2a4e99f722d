package dev.outboxkit.relay.cdc.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.core.OutboxTables;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * The relay's own rows: {@code outbox_cdc_slot} (which slot it adopted, and whether the first drain
 * finished) and {@code outbox_cdc_offset} (Debezium's offsets, fenced).
 */
final class StateTables {

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The relay's record of its slot: where it may be ({@code baseLsn}), whether the first drain finished, the server
     * the relay last streamed it on (nulls before it was recorded) and whether events without a row in the table (the
     * WAL their only copy) were streamed from it.
     */
    record SlotRecord(long baseLsn, boolean drained, Long systemIdentifier, Integer timeline, String serverAddress,
                      String walOnlySeen) {

        /** {@code host:port (system S, timeline T)} of the server last recorded, for logs. */
        String describeServer() {
            return serverAddress == null ? "a server it did not record" : serverAddress + " (system "
                    + (systemIdentifier == null ? "unknown" : systemIdentifier) + ", timeline " + timeline + ")";
        }
    }

    /**
     * The position of the stored offset that matters for the startup check: the LSN Debezium confirms
     * to the server for it ({@code lsn_commit}, else {@code lsn_proc}, else {@code lsn}).
     */
    record StoredOffset(long flushLsn, String json) {
    }

    private final DataSource dataSource;
    private final String slotName;
    private final String instanceId;
    private final LeaseKeeper lease;
    private final String offsetTable;
    private final String slotTable;

    StateTables(DataSource dataSource, SlotTerms terms, String instanceId, LeaseKeeper lease) {
        this.dataSource = dataSource;
        this.slotName = terms.slotName();
        this.instanceId = instanceId;
        this.lease = lease;
        this.offsetTable = terms.table(OutboxTables.CDC_OFFSET);
        this.slotTable = terms.table(OutboxTables.CDC_SLOT);
    }

    SlotRecord slotRecord(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT base_lsn::text, drained_at IS NOT NULL, system_identifier, "
                + "timeline, server_address, CASE WHEN wal_only_seen_at IS NULL THEN NULL ELSE wal_only_seen_at::text || ': ' "
                + "|| coalesce(wal_only_seen, '') END FROM " + slotTable + " WHERE slot_name = ?")) {
            ps.setString(1, slotName);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                long system = rs.getLong(3);
                Long systemIdentifier = rs.wasNull() ? null : system;
                int timeline = rs.getInt(4);
                return new SlotRecord(Lsns.parse(rs.getString(1)), rs.getBoolean(2), systemIdentifier,
                        rs.wasNull() ? null : timeline, rs.getString(5), rs.getString(6));
            }
        }
    }

    void recordSlot(Connection c, long fence, long baseLsn, Server server) throws SQLException {
        lease.inFencedTransaction(c, fence, tx -> {
            try (PreparedStatement ps = tx.prepareStatement("INSERT INTO " + slotTable + " (slot_name, base_lsn, created_by, "
                    + "system_identifier, timeline, server_address) VALUES (?, ?::pg_lsn, ?, ?, ?, ?) "
                    + "ON CONFLICT (slot_name) DO NOTHING")) {
                ps.setString(1, slotName);
                ps.setString(2, Lsns.format(baseLsn));
                ps.setString(3, instanceId);
                bindServer(ps, 4, server);
                ps.executeUpdate();
            }
        });
    }

    /** Records {@code server} as the one the slot is streamed on now (a start after a failover changes it). */
    void recordServer(Connection c, long fence, Server server) throws SQLException {
        lease.inFencedTransaction(c, fence, tx -> {
            try (PreparedStatement ps = tx.prepareStatement("UPDATE " + slotTable + " SET system_identifier = ?, "
                    + "timeline = ?, server_address = ? WHERE slot_name = ?")) {
                bindServer(ps, 1, server);
                ps.setString(4, slotName);
                ps.executeUpdate();
            }
        });
    }

    /**
     * The slot was created again (or adopted) at {@code lsn} on {@code server}, for {@code reason}: like a first start,
     * in one fenced transaction. The old offsets go (they are positions in a slot that is gone), the drain counts as
     * not done, and the slot may be nowhere but at {@code lsn} until the relay stores an offset.
     */
    void recordRecreated(Connection c, long fence, long lsn, Server server, String reason) throws SQLException {
        lease.inFencedTransaction(c, fence, tx -> {
            try (PreparedStatement ps = tx.prepareStatement("DELETE FROM " + offsetTable + " WHERE slot_name = ?")) {
                ps.setString(1, slotName);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = tx.prepareStatement("UPDATE " + slotTable + " SET base_lsn = ?::pg_lsn, "
                    + "drained_at = NULL, system_identifier = ?, timeline = ?, server_address = ?, recreated_at = now(), "
                    + "recreated_reason = ? WHERE slot_name = ?")) {
                ps.setString(1, Lsns.format(lsn));
                bindServer(ps, 2, server);
                ps.setString(5, reason);
                ps.setString(6, slotName);
                ps.executeUpdate();
            }
        });
    }

    /** Remembers, once, that the WAL was the only copy of an event streamed from this slot ({@code what}, one line). */
    void recordWalOnly(Connection c, long fence, String what) throws SQLException {
        lease.inFencedTransaction(c, fence, tx -> {
            try (PreparedStatement ps = tx.prepareStatement("UPDATE " + slotTable + " SET wal_only_seen_at = now(), "
                    + "wal_only_seen = ? WHERE slot_name = ? AND wal_only_seen_at IS NULL")) {
                ps.setString(1, what);
                ps.setString(2, slotName);
                ps.executeUpdate();
            }
        });
    }

    private static void bindServer(PreparedStatement ps, int first, Server server) throws SQLException {
        if (server.systemIdentifier() == null) {
            ps.setNull(first, java.sql.Types.BIGINT);
        } else {
            ps.setLong(first, server.systemIdentifier());
        }
        ps.setInt(first + 1, server.timeline());
        ps.setString(first + 2, server.address().toString());
    }

    void markDrained(Connection c, long fence) throws SQLException {
        lease.inFencedTransaction(c, fence, tx -> {
            try (PreparedStatement ps = tx.prepareStatement(
                    "UPDATE " + slotTable + " SET drained_at = now() WHERE slot_name = ? AND drained_at IS NULL")) {
                ps.setString(1, slotName);
                ps.executeUpdate();
            }
        });
    }

    /**
     * Before the slot is fast-forwarded to {@code lsn}: forget Debezium's offset (it would point before
     * {@code lsn}) and record {@code lsn} as the slot's expected position, in one fenced transaction. Done
     * first, so a crash before the advance leaves a slot that is behind what the relay expects (fine),
     * never ahead of it.
     */
    void rebase(Connection c, long fence, long lsn) throws SQLException {
        lease.inFencedTransaction(c, fence, tx -> {
            try (PreparedStatement ps = tx.prepareStatement("DELETE FROM " + offsetTable + " WHERE slot_name = ?")) {
                ps.setString(1, slotName);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = tx.prepareStatement(
                    "UPDATE " + slotTable + " SET base_lsn = ?::pg_lsn WHERE slot_name = ?")) {
                ps.setString(1, Lsns.format(lsn));
                ps.setString(2, slotName);
                ps.executeUpdate();
            }
        });
    }

    /** The stored offset of this slot, or null before the first one was written. */
    StoredOffset storedOffset(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT offset_value FROM " + offsetTable
                + " WHERE slot_name = ? AND offset_value IS NOT NULL ORDER BY updated_at DESC LIMIT 1")) {
            ps.setString(1, slotName);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                String json = rs.getString(1);
                return new StoredOffset(flushLsn(json), json);
            }
        }
    }

    static long flushLsn(String offsetJson) {
        try {
            JsonNode node = JSON.readTree(offsetJson);
            for (String key : new String[] {"lsn_commit", "lsn_proc", "lsn"}) {
                JsonNode value = node.get(key);
                if (value != null && value.isNumber()) {
                    return value.asLong();
                }
            }
            return -1;
        } catch (IOException e) {
            throw new IllegalStateException("stored offset is not JSON: " + offsetJson, e);
        }
    }

    /** Kafka Connect's read: values of the given keys (null when absent). */
    Map<ByteBuffer, ByteBuffer> read(Collection<ByteBuffer> keys) throws SQLException {
        Map<ByteBuffer, ByteBuffer> out = new HashMap<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT offset_value FROM " + offsetTable + " WHERE slot_name = ? AND offset_key = ?")) {
            c.setAutoCommit(true);
            for (ByteBuffer key : keys) {
                ps.setString(1, slotName);
                ps.setString(2, text(key));
                try (ResultSet rs = ps.executeQuery()) {
                    String value = rs.next() ? rs.getString(1) : null;
                    out.put(key, value == null ? null : ByteBuffer.wrap(value.getBytes(StandardCharsets.UTF_8)));
                }
            }
        }
        return out;
    }

    /**
     * Kafka Connect's write, under the fencing token: one transaction that first checks the token, then
     * upserts. A smaller token never overwrites a larger one.
     *
     * @throws FencedWriteException when another instance holds the lease
     */
    void write(Map<ByteBuffer, ByteBuffer> values, LongSupplier fence) throws SQLException {
        long token = fence.getAsLong();
        List<Map.Entry<ByteBuffer, ByteBuffer>> entries = new ArrayList<>(values.entrySet());
        try (Connection c = dataSource.getConnection()) {
            lease.inFencedTransaction(c, token, tx -> {
                try (PreparedStatement ps = tx.prepareStatement("INSERT INTO " + offsetTable + " AS o "
                        + "(slot_name, offset_key, offset_value, fence, updated_at, updated_by) VALUES (?, ?, ?, ?, now(), ?) "
                        + "ON CONFLICT (slot_name, offset_key) DO UPDATE SET offset_value = EXCLUDED.offset_value, "
                        + "fence = EXCLUDED.fence, updated_at = now(), updated_by = EXCLUDED.updated_by "
                        + "WHERE o.fence <= EXCLUDED.fence")) {
                    for (Map.Entry<ByteBuffer, ByteBuffer> e : entries) {
                        ps.setString(1, slotName);
                        ps.setString(2, text(e.getKey()));
                        ps.setString(3, e.getValue() == null ? null : text(e.getValue()));
                        ps.setLong(4, token);
                        ps.setString(5, instanceId);
                        if (ps.executeUpdate() != 1) {
                            throw new FencedWriteException("offset of slot " + slotName
                                    + " was written by a newer lease holder; this instance (token " + token + ") is stale");
                        }
                    }
                }
            });
        }
    }

    private static String text(ByteBuffer buffer) {
        ByteBuffer b = buffer.duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
