package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.Secret;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lease and its fencing token against the real schema: a stale holder can neither move the offset
 * (back or forward) nor delete rows nor park dead letters once another instance took the lease.
 */
@ExtendWith(OutboxTestkitExtension.class)
class FencingTest {

    private static CdcSettings settings(TestDatabase db, String instance) {
        return TestSettings.of(new DatabaseLogin(db.jdbcUrl(), db.user(), Secret.of(db.password())), "fence_slot", instance,
                Map.of());
    }

    @Test
    void aStaleHolderCannotWriteOffsetsDeleteRowsOrParkEvents(TestDatabase db) throws Exception {
        CdcSettings a = settings(db, "instance-a");
        CdcSettings b = settings(db, "instance-b");
        LeaseKeeper leaseA = new LeaseKeeper(db.dataSource(), CdcWiring.slotTerms(a), a.instanceId(), a.timing().lease());
        LeaseKeeper leaseB = new LeaseKeeper(db.dataSource(), CdcWiring.slotTerms(b), b.instanceId(), b.timing().lease());
        StateTables tablesA = new StateTables(db.dataSource(), CdcWiring.slotTerms(a), a.instanceId(), leaseA);
        StateTables tablesB = new StateTables(db.dataSource(), CdcWiring.slotTerms(b), b.instanceId(), leaseB);

        OptionalLong fenceA = OptionalLong.of(leaseA.tryAcquire().orElseThrow().fence());
        assertThat(leaseB.tryAcquire()).as("a live lease is not taken").isEmpty();
        ByteBuffer key = bytes("[\"engine\",{\"server\":\"outboxkit\"}]");
        tablesA.write(Map.of(key, bytes("{\"lsn_commit\":100}")), fenceA::getAsLong);
        assertThat(storedValue(db)).isEqualTo("{\"lsn_commit\":100}");

        // instance A pauses past its lease; B takes over with a larger token
        expire(db);
        LeaseKeeper.Acquired takeover = leaseB.tryAcquire().orElseThrow();
        assertThat(takeover.previousHolder()).isEqualTo("instance-a");
        OptionalLong fenceB = OptionalLong.of(takeover.fence());
        assertThat(fenceB.getAsLong()).isGreaterThan(fenceA.getAsLong());
        assertThat(leaseA.renew(fenceA.getAsLong())).as("A's renewal fails once B holds the lease").isFalse();

        assertThatThrownBy(() -> tablesA.write(Map.of(key, bytes("{\"lsn_commit\":50}")), fenceA::getAsLong))
                .as("A cannot move the offset back").isInstanceOf(FencedWriteException.class);
        assertThatThrownBy(() -> tablesA.write(Map.of(key, bytes("{\"lsn_commit\":900}")), fenceA::getAsLong))
                .as("nor forward").isInstanceOf(FencedWriteException.class);
        assertThat(storedValue(db)).isEqualTo("{\"lsn_commit\":100}");
        tablesB.write(Map.of(key, bytes("{\"lsn_commit\":200}")), fenceB::getAsLong);
        assertThat(storedValue(db)).isEqualTo("{\"lsn_commit\":200}");

        // deletes and dead letters of the stale holder are refused too
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                    + "VALUES (gen_random_uuid(), 'order', '1', 'E', '{}')");
        }
        long seq = single(db, "SELECT seq FROM outbox_event");
        CdcMetrics metrics = new CdcMetrics(new SimpleMeterRegistry(), "fence_slot");
        java.util.concurrent.atomic.AtomicReference<Throwable> fenced = new java.util.concurrent.atomic.AtomicReference<>();
        try (RowSink sinkA = new RowSink(db.dataSource(), CdcWiring.slotTerms(a), a.instanceId(), leaseA, fenceA::getAsLong, fenced::set, metrics)) {
            OutboxRow row = new OutboxRow(seq, "0191f0a4-1c2b-7d3e-8f40-123456789abc", "order", "1", "E", null, "{}", "{}",
                    "2024-05-06T07:08:09Z");
            assertThatThrownBy(() -> sinkA.park(List.of(new Publisher.DeadLetter(row,
                    dev.outboxkit.runtime.PublishFailures.classify(new dev.outboxkit.core.InvalidEventException("y")), 1))))
                    .isInstanceOf(FencedWriteException.class);
            sinkA.deleteLater(new long[] {seq});
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fenced.get() != null);
        }
        assertThat(single(db, "SELECT count(*) FROM outbox_event")).as("the stale holder deleted nothing").isEqualTo(1);
        assertThat(single(db, "SELECT count(*) FROM outbox_dead_letter")).isZero();
        assertThat(metrics.fenceRejections.count()).isEqualTo(2);
    }

    private static void expire(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("UPDATE outbox_relay_lease SET expires_at = now() - interval '1 second' WHERE lease_key = 'cdc/fence_slot'");
        }
    }

    private static String storedValue(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT offset_value FROM outbox_cdc_offset WHERE slot_name = 'fence_slot'")) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private static long single(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static ByteBuffer bytes(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }
}
