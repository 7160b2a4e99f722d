package dev.outboxkit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class EventIdsTest {

    @Test
    void idsAreVersion7WithTheRfcVariantAndTheCurrentTime() {
        long before = System.currentTimeMillis();
        UUID id = EventIds.next();
        long after = System.currentTimeMillis();
        assertThat(id.version()).isEqualTo(7);
        assertThat(id.variant()).isEqualTo(2);
        assertThat(EventIds.unixMillis(id)).isBetween(before, after + 1);
        assertThat(id.toString()).isEqualTo(id.toString().toLowerCase());
    }

    @Test
    void idsIncreaseStrictlyEvenWhenTheClockStandsStillOrGoesBack() {
        MutableClock clock = new MutableClock(1_700_000_000_000L);
        EventIds ids = new EventIds(clock);
        UUID previous = ids.nextId();
        for (int i = 0; i < 20_000; i++) {
            if (i == 10_000) {
                clock.millis -= 5_000; // NTP step backwards
            }
            UUID next = ids.nextId();
            assertThat(compareUnsigned(next, previous)).as("id %d", i).isPositive();
            previous = next;
        }
    }

    @Test
    void idsFromManyThreadsAreUniqueAndEachThreadSeesThemIncrease() throws Exception {
        int threads = 8;
        int perThread = 50_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        ConcurrentHashMap<UUID, Boolean> all = new ConcurrentHashMap<>();
        List<Future<Boolean>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            results.add(pool.submit(() -> {
                start.await();
                UUID previous = null;
                boolean increasing = true;
                for (int i = 0; i < perThread; i++) {
                    UUID id = EventIds.next();
                    all.put(id, Boolean.TRUE);
                    if (previous != null && compareUnsigned(id, previous) <= 0) {
                        increasing = false;
                    }
                    previous = id;
                }
                return increasing;
            }));
        }
        start.countDown();
        for (Future<Boolean> r : results) {
            assertThat(r.get()).isTrue();
        }
        pool.shutdown();
        assertThat(all).hasSize(threads * perThread);
    }

    @Test
    void unixMillisRefusesOtherVersions() {
        assertThatThrownBy(() -> EventIds.unixMillis(UUID.randomUUID()))
                .hasMessageContaining("not a UUIDv7");
    }

    static int compareUnsigned(UUID a, UUID b) {
        int c = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
        return c != 0 ? c : Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits());
    }

    static final class MutableClock extends Clock {
        long millis;

        MutableClock(long millis) {
            this.millis = millis;
        }

        @Override
        public long millis() {
            return millis;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
