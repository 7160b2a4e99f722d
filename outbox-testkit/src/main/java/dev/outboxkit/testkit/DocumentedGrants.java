package dev.outboxkit.testkit;

import java.sql.SQLException;
import java.sql.Statement;

/**
 * The least-privilege PostgreSQL grants each outboxkit module README (and docs/managed-services.md) documents for
 * its role, in schema {@code public}, nothing more. Tests run every role with exactly these, so a README that
 * promises too little fails the suite; a service's own tests can do the same. {@code role} is a role name the
 * caller made (not validated here: test code only).
 */
public final class DocumentedGrants {

    private DocumentedGrants() {
    }

    /** relay-poller/README.md, "Least-privilege grants". */
    public static void pollingRelay(Statement s, String role) throws SQLException {
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
    public static void walRelay(Statement s, String role, boolean deleteAfterPublish) throws SQLException {
        s.execute("GRANT USAGE ON SCHEMA public TO " + role);
        s.execute("GRANT SELECT" + (deleteAfterPublish ? ", DELETE" : "") + " ON outbox_event TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE ON outbox_dead_letter TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_relay_lease TO " + role);
        s.execute("GRANT USAGE ON SEQUENCE outbox_fence_seq TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_cdc_offset, outbox_cdc_slot TO " + role);
        s.execute("GRANT SELECT, INSERT, DELETE ON outbox_cdc_heartbeat TO " + role);
    }

    /** The publication the WAL relay streams, created by an administrator as relay-debezium/README.md says. */
    public static void walPublication(Statement s) throws SQLException {
        s.execute("CREATE PUBLICATION outboxkit_pub FOR TABLE outbox_event, outbox_cdc_heartbeat WITH (publish = 'insert')");
    }

    /** consumer-dedupe/README.md, "Least privilege" (plus, for its caller to add, what the handler needs). */
    public static void consumer(Statement s, String role) throws SQLException {
        s.execute("GRANT USAGE ON SCHEMA public TO " + role);
        s.execute("GRANT SELECT, INSERT, DELETE ON processed_event TO " + role);
    }

    /** outbox-writer/README.md: INSERT in the default mode (KEEP), also SELECT and DELETE for INSERT_AND_DELETE. */
    public static void writer(Statement s, String role, boolean insertAndDelete) throws SQLException {
        s.execute("GRANT USAGE ON SCHEMA public TO " + role);
        s.execute("GRANT " + (insertAndDelete ? "INSERT, SELECT, DELETE" : "INSERT")
                + " ON outbox_event TO " + role);
    }
}
