package dev.outboxkit.testkit;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.Grants;
import dev.outboxkit.core.spi.RoleGrants;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * The least-privilege PostgreSQL grants each outboxkit module README (and docs/managed-services.md) documents for
 * its role, in schema {@code public}, nothing more, as {@link Grant}s (one privilege each) and as statements to run.
 * They are not written out here: each list is derived from the one definition the component itself checks at start
 * (outbox-core's {@code RoleGrants}), so what the component demands and what the tests give a role cannot drift apart.
 * Tests run every role with exactly these, so a component that needs more than it checks fails the suite, and the
 * components' start-up checks revoke them one at a time ({@code GrantsAtStartTest}); a service's own tests can do the
 * same. {@code role} is a role name the caller made (not validated here: test code only).
 */
public final class DocumentedGrants {

    private static final String SCHEMA = OutboxTables.DEFAULT_SCHEMA;

    private DocumentedGrants() {
    }

    /**
     * relay-poller/README.md, "Least-privilege grants": what the relay checks at start and its report
     * ({@link #relayReportWriter()}, which it does not check).
     */
    public static List<Grant> pollingRelay() {
        return withReport(of(RoleGrants.pollingRelay(SCHEMA)));
    }

    /**
     * relay-poller/README.md and relay-debezium/README.md: the instance's report in {@code outbox_relay_report}, part of
     * {@link #pollingRelay()} and {@link #cdcRelay(boolean)}; best effort, so neither relay refuses to start without it.
     */
    public static List<Grant> relayReportWriter() {
        return of(RoleGrants.relayReportWriter(SCHEMA));
    }

    /** {@code grants} and the report's, USAGE on the schema once. */
    private static List<Grant> withReport(List<Grant> grants) {
        List<Grant> out = new ArrayList<>(grants);
        relayReportWriter().stream().filter(g -> !out.contains(g)).forEach(out::add);
        return out;
    }

    /**
     * relay-debezium/README.md, "Least-privilege role": the REPLICATION attribute (not applied by
     * {@link #cdcRelay(Statement, String, boolean)}: the caller creates the role with it) and the table grants;
     * DELETE on the outbox only with {@code deleteAfterPublish}; the report's ({@link #relayReportWriter()}) last. The publication is an administrator's:
     * {@link #cdcPublication}.
     */
    public static List<Grant> cdcRelay(boolean deleteAfterPublish) {
        return withReport(of(RoleGrants.cdcRelay(SCHEMA, deleteAfterPublish)));
    }

    /**
     * The old name of {@link #cdcRelay(boolean)}, which it calls.
     *
     * @deprecated use {@link #cdcRelay(boolean)}; removed in 0.2.0
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static List<Grant> walRelay(boolean deleteAfterPublish) {
        return cdcRelay(deleteAfterPublish);
    }

    /** consumer-dedupe/README.md, "Least privilege" (plus, for its caller to add, what the handler needs). */
    public static List<Grant> consumer() {
        return of(RoleGrants.consumer(SCHEMA, true));
    }

    /** outbox-writer/README.md: INSERT in the default mode (KEEP), also SELECT and DELETE for INSERT_AND_DELETE. */
    public static List<Grant> writer(boolean insertAndDelete) {
        return of(RoleGrants.writer(SCHEMA, insertAndDelete));
    }

    /** outbox-writer/README.md: {@code IdempotencyKeys} (its writer's grants come on top: {@link #writer}). */
    public static List<Grant> idempotencyKeys() {
        return of(RoleGrants.idempotencyKeys(SCHEMA));
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox status}. */
    public static List<Grant> status() {
        return of(RoleGrants.status(SCHEMA));
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox dead-letters list}. */
    public static List<Grant> deadLettersList() {
        return of(RoleGrants.deadLettersList(SCHEMA));
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox dead-letters discard}. */
    public static List<Grant> deadLettersDiscard() {
        return of(RoleGrants.deadLettersDiscard(SCHEMA));
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox dead-letters retry} (the operator role there holds all three). */
    public static List<Grant> deadLettersRetry() {
        return of(RoleGrants.deadLettersRetry(SCHEMA));
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox replay} (a dry run too). */
    public static List<Grant> replay() {
        return of(RoleGrants.replay(SCHEMA));
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.traceEvent} ("where is my event?"). */
    public static List<Grant> traceEvent() {
        return of(RoleGrants.traceEvent(SCHEMA));
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.relayMembers} (the console's overview). */
    public static List<Grant> relayMembers() {
        return of(RoleGrants.relayMembers(SCHEMA));
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.relayReports} (the console's overview). */
    public static List<Grant> relayReports() {
        return of(RoleGrants.relayReports(SCHEMA));
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.eventPayload} (the payload columns only). */
    public static List<Grant> eventPayload() {
        return of(RoleGrants.eventPayload(SCHEMA));
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.idempotencyKey} (the key's state columns only). */
    public static List<Grant> idempotencyKeyState() {
        return of(RoleGrants.idempotencyKeyState(SCHEMA));
    }

    /** outbox-ops/README.md, "Least-privilege grants": reading the operations journal (the console's Runs page). */
    public static List<Grant> journal() {
        return of(RoleGrants.journal(SCHEMA));
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code outbox reconcile}, on the outbox database. */
    public static List<Grant> reconcileOutboxDatabase() {
        return of(RoleGrants.reconcileOutboxDatabase(SCHEMA));
    }

    /**
     * The old name of {@link #reconcileOutboxDatabase()}, which it calls.
     *
     * @deprecated use {@link #reconcileOutboxDatabase()}; removed in 0.2.0
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static List<Grant> reconcileProducer() {
        return reconcileOutboxDatabase();
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code outbox reconcile}, consumer side in {@code database}. */
    public static List<Grant> reconcileConsumer(String database) {
        return of(RoleGrants.reconcileConsumer(SCHEMA), database, null);
    }

    /**
     * outbox-ops/README.md, "Least-privilege grants": {@code outbox purge} with dead-letter retention, on the outbox
     * database: membership in {@code intentOwner}, the role owning {@code outbox_intent} and its partitions, and CREATE
     * on the schema (new day partitions).
     */
    public static List<Grant> purge(String intentOwner) {
        return of(RoleGrants.purge(SCHEMA, EnumSet.of(RoleGrants.Purged.DEAD_LETTERS)), null, intentOwner);
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code outbox purge --group}, on the consumer database. */
    public static List<Grant> purgeInbox() {
        return of(RoleGrants.purgeInbox(SCHEMA));
    }

    private static List<Grant> of(Grants grants) {
        return of(grants, null, null);
    }

    /**
     * {@code grants} as {@link Grant}s; {@code database} names the current database (TEMPORARY), {@code owner} the role
     * owning a table (membership).
     */
    private static List<Grant> of(Grants grants, String database, String owner) {
        List<Grant> out = new ArrayList<>();
        for (Grants.Privilege p : grants.privileges()) {
            out.add(switch (p.kind()) {
                case "OWNER" -> Grant.memberOf(require(owner, p));
                case "DATABASE" -> Grant.onDatabase(require(database, p), p.privilege());
                default -> new Grant(p.privilege(), p.kind(), p.object());
            });
        }
        return out;
    }

    private static String require(String name, Grants.Privilege p) {
        if (name == null) {
            throw new IllegalStateException("no name given for " + p);
        }
        return name;
    }

    /** Runs {@link #pollingRelay()} for {@code role}. */
    public static void pollingRelay(Statement s, String role) throws SQLException {
        apply(s, role, pollingRelay());
    }

    /** Runs {@link #cdcRelay(boolean)}'s grants for {@code role} (not REPLICATION: create the role with it). */
    public static void cdcRelay(Statement s, String role, boolean deleteAfterPublish) throws SQLException {
        apply(s, role, cdcRelay(deleteAfterPublish).stream().filter(g -> !g.kind().equals("ROLE")).toList());
    }

    /**
     * The old name of {@link #cdcRelay(Statement, String, boolean)}, which it calls.
     *
     * @deprecated use {@link #cdcRelay(Statement, String, boolean)}; removed in 0.2.0
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static void walRelay(Statement s, String role, boolean deleteAfterPublish) throws SQLException {
        cdcRelay(s, role, deleteAfterPublish);
    }

    /** The publication the CDC relay streams, created by an administrator as relay-debezium/README.md says. */
    public static void cdcPublication(Statement s) throws SQLException {
        s.execute("CREATE PUBLICATION outboxkit_pub FOR TABLE outbox_event, outbox_cdc_heartbeat WITH (publish = 'insert')");
    }

    /**
     * The old name of {@link #cdcPublication(Statement)}, which it calls.
     *
     * @deprecated use {@link #cdcPublication(Statement)}; removed in 0.2.0
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static void walPublication(Statement s) throws SQLException {
        cdcPublication(s);
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
            s.execute(g.statement(SCHEMA, role));
        }
    }
}
