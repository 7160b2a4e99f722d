package dev.outboxkit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.core.spi.Grants.Privilege;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * {@link Grants#privileges()} of the one grants definition, as the testkit's DocumentedGrants turns them into roles:
 * one privilege per GRANT item, a column privilege once with all its columns, the attributes last. (The grants are
 * proven against PostgreSQL by each module's GrantsAtStartTest; this checks the listing alone.)
 */
class RoleGrantsTest {

    @Test
    void retryListsTheColumnPrivilegeOnceWithEveryColumn() {
        assertThat(RoleGrants.deadLettersRetry("ops").privileges()).containsExactly(
                new Privilege("USAGE", "SCHEMA", "ops"),
                new Privilege("SELECT", "TABLE", "outbox_dead_letter"),
                new Privilege("DELETE", "TABLE", "outbox_dead_letter"),
                new Privilege("INSERT", "TABLE", "outbox_ops_journal"),
                new Privilege("INSERT", "TABLE", "outbox_event"),
                new Privilege("SELECT (seq, id, aggregate_type, aggregate_id)", "TABLE", "outbox_event"));
    }

    @Test
    void purgeNamesTheLedgerOwnerCreateAndOnlyWhatIsConfigured() {
        assertThat(RoleGrants.purge("public", EnumSet.of(RoleGrants.Purged.DEAD_LETTERS)).privileges()).containsExactly(
                new Privilege("USAGE", "SCHEMA", "public"),
                new Privilege("MEMBER", "OWNER", "outbox_intent"),
                new Privilege("CREATE", "SCHEMA", "public"),
                new Privilege("SELECT", "TABLE", "outbox_event"),
                new Privilege("SELECT", "TABLE", "outbox_ops_journal"),
                new Privilege("INSERT", "TABLE", "outbox_ops_journal"),
                new Privilege("DELETE", "TABLE", "outbox_ops_journal"),
                new Privilege("SELECT", "TABLE", "outbox_dead_letter"),
                new Privilege("DELETE", "TABLE", "outbox_dead_letter"));
        assertThat(RoleGrants.purge("public", EnumSet.of(RoleGrants.Purged.ARCHIVE,
                RoleGrants.Purged.IDEMPOTENCY_KEYS_WITH_TOMBSTONES)).privileges())
                .contains(new Privilege("DELETE", "TABLE", "outbox_event"),
                        new Privilege("DELETE", "TABLE", "idempotency_key"),
                        new Privilege("INSERT", "TABLE", "idempotency_key_tombstone"))
                .doesNotContain(new Privilege("DELETE", "TABLE", "outbox_dead_letter"));
    }

    @Test
    void theJournalIsWrittenByWhatActsAndReadByTheConsole() {
        Privilege insert = new Privilege("INSERT", "TABLE", "outbox_ops_journal");
        assertThat(RoleGrants.reconcileOutboxDatabase("public").privileges()).contains(insert);
        assertThat(RoleGrants.deadLettersDiscard("public").privileges()).contains(insert);
        assertThat(RoleGrants.journal("public").privileges()).containsExactly(new Privilege("USAGE", "SCHEMA", "public"),
                new Privilege("SELECT", "TABLE", "outbox_ops_journal"));
    }

    @Test
    void relayReportsAreWrittenByBothRelaysOutsideTheirStartChecksAndReadByTheConsole() {
        Privilege select = new Privilege("SELECT", "TABLE", "outbox_relay_report");
        assertThat(RoleGrants.relayReportWriter("public").privileges()).containsExactly(
                new Privilege("USAGE", "SCHEMA", "public"), select, new Privilege("INSERT", "TABLE", "outbox_relay_report"),
                new Privilege("UPDATE", "TABLE", "outbox_relay_report"), new Privilege("DELETE", "TABLE", "outbox_relay_report"));
        assertThat(RoleGrants.relayReports("public").privileges()).containsExactly(
                new Privilege("USAGE", "SCHEMA", "public"), select);
        // best effort: a role without them starts and publishes (the relays name the statement in their log)
        assertThat(RoleGrants.pollingRelay("public").privileges()).doesNotContain(select);
        assertThat(RoleGrants.cdcRelay("public", true).privileges()).doesNotContain(select);
    }

    @Test
    void theCdcRelayNeedsReplicationAndTheReconcilerATemporaryTable() {
        assertThat(RoleGrants.cdcRelay("public", false).privileges())
                .contains(new Privilege("USAGE", "SEQUENCE", "outbox_fence_seq"), new Privilege("REPLICATION", "ROLE", ""))
                .doesNotContain(new Privilege("DELETE", "TABLE", "outbox_event"));
        assertThat(RoleGrants.cdcRelay("public", true).privileges()).contains(new Privilege("DELETE", "TABLE", "outbox_event"));
        assertThat(RoleGrants.reconcileConsumer("public").privileges()).last()
                .isEqualTo(new Privilege("TEMPORARY", "DATABASE", ""));
    }
}
