package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.UUID;

/**
 * The load generator's writer for relay latency: each event is one INSERT of the contract
 * columns in its own transaction (autocommit), marked committed as soon as the commit returned.
 * One instance per writer thread (one connection each).
 */
public final class OutboxInsertTarget implements OpenLoopDriver.Target {

    private final Connection connection;
    private final PreparedStatement insert;
    private final int payloadBytes;

    private OutboxInsertTarget(TestDatabase db, String schema, int payloadBytes) throws Exception {
        this.connection = db.connect();
        this.insert = connection.prepareStatement("INSERT INTO " + Identifiers.qualified(schema, "outbox_event")
                + " (id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, ?, ?, ?, ?::jsonb)");
        this.payloadBytes = payloadBytes;
    }

    /** A factory for {@link OpenLoopDriver#run}: one target (connection) per writer thread. */
    public static OpenLoopDriver.TargetFactory factory(TestDatabase db, String schema, int payloadBytes) {
        return () -> new OutboxInsertTarget(db, schema, payloadBytes);
    }

    @Override
    public void send(long n, OpenLoopDriver.Commit commit) throws Exception {
        UUID id = EventIds.next();
        insert.setObject(1, id);
        insert.setString(2, SyntheticEvents.AGGREGATE_TYPE);
        insert.setString(3, SyntheticEvents.aggregateId(n));
        insert.setString(4, SyntheticEvents.EVENT_TYPE);
        insert.setString(5, SyntheticEvents.payload(n, payloadBytes));
        insert.executeUpdate();
        commit.done(id);
    }

    @Override
    public void close() throws Exception {
        connection.close();
    }
}
