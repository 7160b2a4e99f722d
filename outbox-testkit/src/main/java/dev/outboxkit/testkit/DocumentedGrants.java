package dev.outboxkit.testkit;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The least-privilege PostgreSQL grants each outboxkit module README (and docs/managed-services.md) documents for
 * its role, in schema {@code public}, nothing more, as {@link Grant}s (one privilege each) and as statements to run.
 * Tests run every role with exactly these, so a README that promises too little fails the suite, and the components'
 * start-up checks revoke them one at a time ({@code GrantsAtStartTest}); a service's own tests can do the same.
 * {@code role} is a role name the caller made (not validated here: test code only).
 */
public final class DocumentedGrants {

    private DocumentedGrants() {
    }

    /** relay-poller/README.md, "Least-privilege grants". */
    public static List<Grant> pollingRelay() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("outbox_event", "SELECT", "INSERT", "UPDATE", "DELETE"));
        g.addAll(Grant.onTable("outbox_dead_letter", "SELECT", "INSERT", "UPDATE"));
        g.addAll(Grant.onTable("outbox_relay_lease", "SELECT", "INSERT", "UPDATE", "DELETE"));
        g.addAll(Grant.onTable("outbox_relay_member", "SELECT", "INSERT", "UPDATE", "DELETE"));
        g.add(Grant.usageOnSequence("outbox_fence_seq"));
        return g;
    }

    /**
     * relay-debezium/README.md, "Least-privilege role": the REPLICATION attribute (not applied by
     * {@link #walRelay(Statement, String, boolean)}: the caller creates the role with it) and the table grants;
     * DELETE on the outbox only with {@code deleteAfterPublish}. The publication is an administrator's:
     * {@link #walPublication}.
     */
    public static List<Grant> walRelay(boolean deleteAfterPublish) {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.replication());
        g.add(Grant.usageOnSchema("public"));
        g.addAll(deleteAfterPublish ? Grant.onTable("outbox_event", "SELECT", "DELETE") : Grant.onTable("outbox_event", "SELECT"));
        g.addAll(Grant.onTable("outbox_dead_letter", "SELECT", "INSERT", "UPDATE"));
        g.addAll(Grant.onTable("outbox_relay_lease", "SELECT", "INSERT", "UPDATE", "DELETE"));
        g.add(Grant.usageOnSequence("outbox_fence_seq"));
        g.addAll(Grant.onTable("outbox_cdc_offset", "SELECT", "INSERT", "UPDATE", "DELETE"));
        g.addAll(Grant.onTable("outbox_cdc_slot", "SELECT", "INSERT", "UPDATE", "DELETE"));
        g.addAll(Grant.onTable("outbox_cdc_heartbeat", "SELECT", "INSERT", "DELETE"));
        return g;
    }

    /** consumer-dedupe/README.md, "Least privilege" (plus, for its caller to add, what the handler needs). */
    public static List<Grant> consumer() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("processed_event", "SELECT", "INSERT", "DELETE"));
        return g;
    }

    /** outbox-writer/README.md: INSERT in the default mode (KEEP), also SELECT and DELETE for INSERT_AND_DELETE. */
    public static List<Grant> writer(boolean insertAndDelete) {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(insertAndDelete ? Grant.onTable("outbox_event", "INSERT", "SELECT", "DELETE")
                : Grant.onTable("outbox_event", "INSERT"));
        return g;
    }

    /** outbox-writer/README.md: {@code IdempotencyKeys} (its writer's grants come on top: {@link #writer}). */
    public static List<Grant> idempotencyKeys() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("idempotency_key", "SELECT", "INSERT", "UPDATE", "DELETE"));
        g.addAll(Grant.onTable("idempotency_key_tombstone", "SELECT", "INSERT", "UPDATE"));
        return g;
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox status}. */
    public static List<Grant> status() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("outbox_event", "SELECT"));
        g.addAll(Grant.onTable("outbox_dead_letter", "SELECT"));
        g.addAll(Grant.onTable("outbox_relay_lease", "SELECT"));
        return g;
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox dead-letters list}. */
    public static List<Grant> deadLettersList() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("outbox_dead_letter", "SELECT"));
        return g;
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox dead-letters discard}. */
    public static List<Grant> deadLettersDiscard() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("outbox_dead_letter", "SELECT", "DELETE"));
        return g;
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox dead-letters retry} (the operator role there holds all three). */
    public static List<Grant> deadLettersRetry() {
        List<Grant> g = new ArrayList<>(deadLettersDiscard());
        g.addAll(Grant.onTable("outbox_event", "INSERT"));
        g.add(Grant.onColumns("outbox_event", "SELECT", "seq", "id", "aggregate_type", "aggregate_id"));
        return g;
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox replay} (a dry run too). */
    public static List<Grant> replay() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("outbox_event", "SELECT", "UPDATE"));
        g.addAll(Grant.onTable("outbox_dead_letter", "SELECT"));
        return g;
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code outbox reconcile}, producer side. */
    public static List<Grant> reconcileProducer() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        for (String table : List.of("outbox_intent", "outbox_event", "outbox_dead_letter", "idempotency_key")) {
            g.addAll(Grant.onTable(table, "SELECT"));
        }
        return g;
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code outbox reconcile}, consumer side in {@code database}. */
    public static List<Grant> reconcileConsumer(String database) {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("processed_event", "SELECT"));
        g.addAll(Grant.onTable("external_effect", "SELECT"));
        g.add(Grant.onDatabase(database, "TEMPORARY"));
        return g;
    }

    /**
     * outbox-ops/README.md, "Least-privilege grants": {@code outbox purge} with dead-letter retention, on the producer
     * database: membership in {@code intentOwner}, the role owning {@code outbox_intent} and its partitions, and CREATE
     * on the schema (new day partitions).
     */
    public static List<Grant> purge(String intentOwner) {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.memberOf(intentOwner));
        g.add(Grant.usageOnSchema("public"));
        g.add(new Grant("CREATE", "SCHEMA", "public"));
        g.addAll(Grant.onTable("outbox_event", "SELECT"));
        g.addAll(Grant.onTable("outbox_dead_letter", "SELECT", "DELETE"));
        return g;
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code outbox purge --group}, on the consumer database. */
    public static List<Grant> purgeInbox() {
        List<Grant> g = new ArrayList<>();
        g.add(Grant.usageOnSchema("public"));
        g.addAll(Grant.onTable("processed_event", "SELECT", "DELETE"));
        return g;
    }

    /** Runs {@link #pollingRelay()} for {@code role}. */
    public static void pollingRelay(Statement s, String role) throws SQLException {
        apply(s, role, pollingRelay());
    }

    /** Runs {@link #walRelay(boolean)}'s grants for {@code role} (not REPLICATION: create the role with it). */
    public static void walRelay(Statement s, String role, boolean deleteAfterPublish) throws SQLException {
        apply(s, role, walRelay(deleteAfterPublish).stream().filter(g -> !g.kind().equals("ROLE")).toList());
    }

    /** The publication the WAL relay streams, created by an administrator as relay-debezium/README.md says. */
    public static void walPublication(Statement s) throws SQLException {
        s.execute("CREATE PUBLICATION outboxkit_pub FOR TABLE outbox_event, outbox_cdc_heartbeat WITH (publish = 'insert')");
    }

    /** Runs {@link #consumer()} for {@code role}. */
    public static void consumer(Statement s, String role) throws SQLException {
        apply(s, role, consumer());
    }

    /** Runs {@link #writer(boolean)} for {@code role}. */
    public static void writer(Statement s, String role, boolean insertAndDelete) throws SQLException {
        apply(s, role, writer(insertAndDelete));
    }

    private static void apply(Statement s, String role, List<Grant> grants) throws SQLException {
        for (Grant g : grants) {
            s.execute(g.statement("public", role));
        }
    }
}
