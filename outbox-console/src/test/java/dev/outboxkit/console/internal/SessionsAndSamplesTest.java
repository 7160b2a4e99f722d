package dev.outboxkit.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.ops.admin.RelayReport;
import dev.outboxkit.testkit.ManualClock;
import java.time.Duration;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The console's in-memory state stays bounded: sessions by count and lifetime, failed logins per minute, chart samples. */
class SessionsAndSamplesTest {

    private final ManualClock clock = ManualClock.startingAt(Instant.parse("2026-12-07T03:00:00Z"));

    @Test
    void aLoginBeyondTheBoundEndsTheOldestAndASessionEndsWithItsLifetime() {
        Sessions sessions = new Sessions(Duration.ofHours(8), clock);
        List<Sessions.Session> made = new ArrayList<>();
        for (int i = 0; i < Sessions.MAX_SESSIONS + 6; i++) {
            made.add(sessions.create("op"));
        }
        assertThat(made.subList(0, 6)).allSatisfy(s -> assertThat(sessions.find(s.id())).isNull());
        assertThat(made.subList(6, made.size())).allSatisfy(s -> assertThat(sessions.find(s.id())).isEqualTo(s));
        assertThat(made).extracting(Sessions.Session::id).doesNotHaveDuplicates().allSatisfy(id -> assertThat(id).hasSize(43));
        assertThat(made.get(6).csrf()).isNotEqualTo(made.get(7).csrf()).isNotEqualTo(made.get(6).id());

        Sessions.Session last = made.get(made.size() - 1);
        clock.advance(Duration.ofHours(8).minusSeconds(1));
        assertThat(sessions.find(last.id())).isEqualTo(last);
        clock.advance(Duration.ofSeconds(1));
        assertThat(sessions.find(last.id())).isNull();
    }

    @Test
    void wrongTokensAreThrottledPerMinute() {
        Sessions sessions = new Sessions(Duration.ofHours(8), clock);
        for (int i = 0; i < Sessions.MAX_FAILED_LOGINS_PER_MINUTE; i++) {
            assertThat(sessions.loginAllowed()).isTrue();
            sessions.loginFailed();
        }
        assertThat(sessions.loginAllowed()).isFalse();
        clock.advance(Duration.ofMinutes(1));
        assertThat(sessions.loginAllowed()).isTrue();
    }

    @Test
    void hostCsrfTokensDependOnTheOperatorAndTheComparisonIsExact() {
        Sessions sessions = new Sessions(Duration.ofHours(8), clock);
        assertThat(sessions.hostCsrf("alice")).isEqualTo(sessions.hostCsrf("alice")).isNotEqualTo(sessions.hostCsrf("bob"));
        assertThat(new Sessions(Duration.ofHours(8), clock).hostCsrf("alice")).isNotEqualTo(sessions.hostCsrf("alice"));
        assertThat(Sessions.constantTimeEquals("token-1", "token-1")).isTrue();
        assertThat(Sessions.constantTimeEquals("token-1", "token-2")).isFalse();
        assertThat(Sessions.constantTimeEquals("token-1", "token-1 ")).isFalse();
        assertThat(Sessions.constantTimeEquals("token-1", null)).isFalse();
    }

    @Test
    void theChartKeepsTheLastHourOfSamplesOldestFirst() {
        OverviewSamples samples = new OverviewSamples();
        assertThat(samples.json()).isEqualTo("{\"t\":[],\"backlog\":[],\"published\":[]}");
        Instant t0 = Instant.parse("2026-12-07T03:00:00Z");
        for (int i = 0; i < OverviewSamples.CAPACITY + 5; i++) {
            samples.add(t0.plusSeconds(10L * i), i == 7 ? null : (long) i, i % 2 == 0 ? null : i * 1.25);
        }
        assertThat(samples.size()).isEqualTo(OverviewSamples.CAPACITY).isEqualTo(360);
        String json = samples.json();
        assertThat(json).startsWith("{\"t\":[" + t0.plusSeconds(50).getEpochSecond() + ",")
                .as("a sample that could not be read is a gap, not a zero").contains(",\"backlog\":[5,6,null,8,")
                .contains(",\"published\":[6.3,null,8.8,null,")
                .endsWith(",453.8,null]}");
    }

    @Test
    void thePublishRateIsTheRelaysCountersDifferenceOverTime() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        PublishRate rate = new PublishRate(registry);
        Instant t0 = Instant.parse("2026-12-07T03:00:00Z");
        assertThat(rate.next(t0, null)).as("nothing to compare with yet").isNull();
        registry.counter("outbox.relay.published", "relay", "poll").increment(300);
        registry.counter("outbox.relay.published", "relay", "cdc").increment(200);
        assertThat(rate.next(t0.plusSeconds(10), null)).as("every relay of the process, summed").isEqualTo(50.0);
        assertThat(rate.next(t0.plusSeconds(20), null)).isEqualTo(0.0);
        assertThat(rate.lastPublished()).as("the reading that saw the counters grow").isEqualTo(t0.plusSeconds(10));
    }

    private static RelayReport report(String id, Instant startedAt, long published) {
        return new RelayReport(id, "poll", "node", startedAt, Duration.ofSeconds(1), true, true, null, published, null);
    }

    @Test
    void withReportsThePublishRateIsTheFleetsInstanceByInstance() {
        PublishRate rate = new PublishRate(null);
        Instant t0 = Instant.parse("2026-12-07T03:00:00Z");
        Instant started = t0.minusSeconds(3600);
        assertThat(rate.next(t0, List.of(report("a", started, 1_000), report("b", started, 5_000)))).isNull();
        // a published 200, b stopped (its report is gone), c started after the last reading with 100, and a restarted
        // "b" under the same id counts from its own start
        Instant t1 = t0.plusSeconds(10);
        assertThat(rate.next(t1, List.of(report("a", started, 1_200), report("c", t0.plusSeconds(4), 100),
                report("b", t0.plusSeconds(5), 50)))).isEqualTo(35.0);
        assertThat(rate.next(t1.plusSeconds(10), List.of(report("a", started, 1_200)))).isEqualTo(0.0);
        assertThat(rate.next(t1.plusSeconds(20), null)).as("no reports and no relay in this process").isNull();
    }
}
