package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.relay.Relay;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The small helpers tests share: {@link ManualClock}, {@link RelayLeases}, {@link Readiness#startWaiting}. */
@ExtendWith(OutboxTestkitExtension.class)
class TestHelpersTest {

    @Test
    void aManualClockStandsStillUntilMovedAndKeepsUtc() {
        Instant start = Instant.parse("2030-01-01T00:00:00Z");
        ManualClock clock = ManualClock.startingAt(start);
        assertThat(clock.instant()).isEqualTo(start);
        assertThat(clock.instant()).isEqualTo(start);
        clock.advance(Duration.ofSeconds(90));
        assertThat(clock.instant()).isEqualTo(start.plusSeconds(90));
        assertThat(clock.millis()).isEqualTo(start.plusSeconds(90).toEpochMilli());
        Clock zoned = clock.withZone(ZoneId.of("Europe/Paris"));
        assertThat(zoned).isSameAs(clock);
        assertThat(zoned.getZone()).isEqualTo(ZoneId.of("Z"));
        assertThatThrownBy(() -> ManualClock.startingAt(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("start must not be null");
    }

    @Test
    void relayLeasesReadTheLeaseTable(TestDatabase db) throws Exception {
        assertThat(RelayLeases.find(db, RelayLeases.cdcRelayKey("s1"))).isEmpty();
        assertThatThrownBy(() -> RelayLeases.held(db, "cdc/s1")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("lease cdc/s1 held");
        db.exec("INSERT INTO outbox_relay_lease (lease_key, holder, fence, acquired_at, expires_at) VALUES "
                        + "('cdc/s1', 'a', 7, now() - interval '1 minute', now() + interval '1 minute')",
                "INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at) VALUES "
                        + "('poll/0', 'a', 1, now() + interval '1 minute'), ('poll/1', 'a', 2, now() + interval '1 minute'), "
                        + "('poll/2', 'b', 3, now() + interval '1 minute'), ('poll/3', 'c', 4, now() - interval '1 second')");

        RelayLeases.Lease wal = RelayLeases.held(db, RelayLeases.cdcRelayKey("s1"));
        assertThat(wal.key()).isEqualTo("cdc/s1");
        assertThat(wal.holder()).isEqualTo("a");
        assertThat(wal.fence()).isEqualTo(7);
        assertThat(wal.live()).isTrue();
        assertThat(wal.acquiredAt()).isBefore(wal.expiresAt());
        assertThat(RelayLeases.find(db, "poll/3")).hasValueSatisfying(l -> assertThat(l.live()).isFalse());
        // the CDC relay's lease and the expired partition do not count
        assertThat(RelayLeases.partitionsByHolder(db)).containsOnly(
                java.util.Map.entry("a", 2), java.util.Map.entry("b", 1));
    }

    @Test
    void aStartCaughtWaitingGoesOnOnceTheDependencyIsRestored() throws Exception {
        CountDownLatch restored = new CountDownLatch(1);
        AtomicReference<Relay.Health> health = new AtomicReference<>(new Relay.Health(true, false, "starting"));
        Relay relay = new Relay() {
            @Override
            public void start() {
                health.set(new Relay.Health(true, false, "the database at db:5432 does not answer yet (attempt 1)"));
                try {
                    if (!restored.await(30, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("never restored");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                health.set(new Relay.Health(true, true, "publishing"));
            }

            @Override
            public Relay.Health health() {
                return health.get();
            }

            @Override
            public void close() {
            }
        };
        assertThatThrownBy(() -> Readiness.startWaiting(new Fixed(new Relay.Health(true, true,
                "does not answer yet (attempt 1) at db:5432")), "does not answer yet (attempt ", "db:5432", Duration.ofSeconds(30)))
                .isInstanceOf(AssertionError.class).hasMessageContaining("got ready=true");
        assertThatThrownBy(() -> Readiness.startWaiting(new Fixed(new Relay.Health(true, false,
                "does not answer yet (attempt 1) at db:5432")), "does not answer yet (attempt ", "other:5432", Duration.ofSeconds(30)))
                .isInstanceOf(AssertionError.class).hasMessageContaining("name the address");

        Readiness.WaitingStart waiting = Readiness.startWaiting(relay, "does not answer yet (attempt ", "db:5432",
                Duration.ofSeconds(30));
        assertThat(waiting.health().ready()).isFalse();
        assertThat(waiting.health().detail()).contains("db:5432");
        assertThat(waiting.start()).isNotDone();

        Readiness.Restored back = waiting.afterRestore(restored::countDown, Duration.ofSeconds(30), Duration.ofSeconds(30));
        assertThat(waiting.start()).isDone();
        assertThat(relay.health().ready()).isTrue();
        assertThat(back.started()).isPositive();
        assertThat(back.toString()).startsWith("started ").contains(" ms after it answered, ready ");
    }

    /** A relay whose start returns at once and whose health never changes. */
    private record Fixed(Relay.Health health) implements Relay {
        @Override
        public void start() {
        }

        @Override
        public void close() {
        }
    }
}
