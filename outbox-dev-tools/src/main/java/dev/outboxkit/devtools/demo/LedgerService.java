package dev.outboxkit.devtools.demo;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.IdempotentResult;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import dev.outboxkit.writer.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The demo's producer: a ledger that moves money between accounts. Each transfer is one request
 * with an idempotency key; its effect (two balance updates, two ledger entries) and its two
 * events (AccountDebited, AccountCredited) commit in one transaction with the key's outcome.
 */
final class LedgerService {

    static final String AGGREGATE = "account";
    static final String SCOPE = "transfers";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What a transfer committed: its events with the account versions they carry (per-aggregate order). */
    record Committed(UUID eventId, String account, long version) {
    }

    /** The client's view of one request. */
    record Reply(int status, boolean replayed, List<Committed> committed) {
    }

    private final DataSource dataSource;
    private final IdempotencyKeys keys;

    LedgerService(DataSource dataSource, OutboxWriter writer) {
        this.dataSource = dataSource;
        this.keys = IdempotencyKeys.builder().writer(writer).build();
    }

    static void createSchema(DataSource ds, int accounts, long openingBalance) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE account (id text PRIMARY KEY, balance bigint NOT NULL, version bigint NOT NULL)");
            s.execute("CREATE TABLE ledger_entry (transfer_id uuid NOT NULL, account_id text NOT NULL REFERENCES account, "
                    + "amount bigint NOT NULL, version bigint NOT NULL, PRIMARY KEY (transfer_id, account_id))");
            s.execute("INSERT INTO account SELECT 'acc-' || lpad(g::text, 4, '0'), " + openingBalance + ", 0 "
                    + "FROM generate_series(1, " + accounts + ") g");
        }
    }

    /**
     * {@code POST /transfers} with {@code Idempotency-Key: key}: moves {@code amount} from one
     * account to another, or replays the stored outcome of an earlier request with that key.
     */
    Reply transfer(String key, String from, String to, long amount) throws Exception {
        ObjectNode request = JSON.createObjectNode().put("from", from).put("to", to).put("amount", amount);
        List<Committed> committed = new ArrayList<>();
        IdempotentResult result = keys.execute(dataSource, SCOPE, key, request.toString(), (c, tx) -> {
            committed.clear(); // a retried attempt starts over
            UUID transfer = UUID.nameUUIDFromBytes(key.getBytes(StandardCharsets.UTF_8));
            // Lock both accounts in id order: writers serialise per aggregate, no deadlocks.
            String first = from.compareTo(to) < 0 ? from : to;
            String second = first.equals(from) ? to : from;
            long[] versions = new long[2];
            try (PreparedStatement lock = c.prepareStatement("SELECT id FROM account WHERE id IN (?, ?) ORDER BY id FOR UPDATE")) {
                lock.setString(1, first);
                lock.setString(2, second);
                lock.executeQuery().close();
            }
            try (PreparedStatement move = c.prepareStatement(
                    "UPDATE account SET balance = balance + ?, version = version + 1 WHERE id = ? RETURNING version")) {
                versions[0] = apply(move, from, -amount);
                versions[1] = apply(move, to, amount);
            }
            try (PreparedStatement entry = c.prepareStatement(
                    "INSERT INTO ledger_entry (transfer_id, account_id, amount, version) VALUES (?, ?, ?, ?)")) {
                addEntry(entry, transfer, from, -amount, versions[0]);
                addEntry(entry, transfer, to, amount, versions[1]);
                entry.executeBatch();
            }
            OutboxMessage debited = event("AccountDebited", from, transfer, -amount, versions[0]);
            OutboxMessage credited = event("AccountCredited", to, transfer, amount, versions[1]);
            // Buffered: the events, the key's completion and COMMIT go to the database in one round trip.
            tx.add(debited);
            tx.add(credited);
            committed.add(new Committed(debited.id(), from, versions[0]));
            committed.add(new Committed(credited.id(), to, versions[1]));
            byte[] body = JSON.createObjectNode().put("transfer", transfer.toString()).toString().getBytes(StandardCharsets.UTF_8);
            return new StoredResponse(201, Map.of("Content-Type", "application/json"), body);
        });
        return new Reply(result.response().status(), result.replayed(), result.replayed() ? List.of() : List.copyOf(committed));
    }

    private static long apply(PreparedStatement move, String account, long delta) throws SQLException {
        move.setLong(1, delta);
        move.setString(2, account);
        try (ResultSet rs = move.executeQuery()) {
            if (!rs.next()) {
                throw new IllegalStateException("no account " + account);
            }
            return rs.getLong(1);
        }
    }

    private static void addEntry(PreparedStatement entry, UUID transfer, String account, long amount, long version)
            throws SQLException {
        entry.setObject(1, transfer);
        entry.setString(2, account);
        entry.setLong(3, amount);
        entry.setLong(4, version);
        entry.addBatch();
    }

    private static OutboxMessage event(String type, String account, UUID transfer, long delta, long version) {
        ObjectNode payload = JSON.createObjectNode()
                .put("account", account).put("transfer", transfer.toString()).put("delta", delta).put("version", version);
        return OutboxMessage.builder(AGGREGATE, account, type).payloadJson(payload.toString()).build();
    }
}
