package dev.outboxkit.reliability;

import dev.outboxkit.writer.WriteMode;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The least-privilege PostgreSQL grants each module README documents, in schema {@code public}, nothing more: every
 * scenario runs its roles with exactly these, so a README that promises too little fails the suite.
 */
final class Grants {

    private Grants() {
    }

    /** relay-poller/README.md, "Least-privilege grants". */
    static void pollingRelay(Statement s, String role) throws SQLException {
        s.execute("GRANT USAGE ON SCHEMA public TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_event TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE ON outbox_dead_letter TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_relay_lease, outbox_relay_member TO " + role);
        s.execute("GRANT USAGE ON SEQUENCE outbox_fence_seq TO " + role);
    }

    /**
     * relay-debezium/README.md, "Least-privilege role" (the role itself needs {@code LOGIN REPLICATION}); DELETE on
     * the outbox only with {@code deleteAfterPublish}. The publication is an administrator's:
     * {@link #walPublication}.
     */
    static void walRelay(Statement s, String role, boolean deleteAfterPublish) throws SQLException {
        s.execute("GRANT USAGE ON SCHEMA public TO " + role);
        s.execute("GRANT SELECT" + (deleteAfterPublish ? ", DELETE" : "") + " ON outbox_event TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE ON outbox_dead_letter TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_relay_lease TO " + role);
        s.execute("GRANT USAGE ON SEQUENCE outbox_fence_seq TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_cdc_offset, outbox_cdc_slot TO " + role);
        s.execute("GRANT SELECT, INSERT, DELETE ON outbox_cdc_heartbeat TO " + role);
    }

    /** The publication the WAL relay streams, created by an administrator as relay-debezium/README.md says. */
    static void walPublication(Statement s) throws SQLException {
        s.execute("CREATE PUBLICATION outboxkit_pub FOR TABLE outbox_event, outbox_cdc_heartbeat WITH (publish = 'insert')");
    }

    /** consumer-dedupe/README.md, "Least privilege" (plus, for its caller to add, what the handler needs). */
    static void consumer(Statement s, String role) throws SQLException {
        s.execute("GRANT USAGE ON SCHEMA public TO " + role);
        s.execute("GRANT SELECT, INSERT, DELETE ON processed_event TO " + role);
    }

    /** outbox-writer/README.md: INSERT in the default mode, also SELECT and DELETE for INSERT_AND_DELETE. */
    static void writer(Statement s, String role, WriteMode mode) throws SQLException {
        s.execute("GRANT USAGE ON SCHEMA public TO " + role);
        s.execute("GRANT " + (mode == WriteMode.INSERT_AND_DELETE ? "INSERT, SELECT, DELETE" : "INSERT")
                + " ON outbox_event TO " + role);
    }
}
