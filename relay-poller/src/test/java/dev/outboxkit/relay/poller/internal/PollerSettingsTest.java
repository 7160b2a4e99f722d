package dev.outboxkit.relay.poller.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.relay.poller.PollerOptions;
import dev.outboxkit.runtime.OptionValues;
import dev.outboxkit.runtime.Tracing;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The polling relay's configuration, alone: read by option name, and what it derives (no database, no Kafka). */
class PollerSettingsTest {

    private static PollerSettings settings(Map<RelayOption<?>, Object> set) {
        // stands in for RelayBuilder.producerConfig: the relay's defaults plus one override
        return PollerSettings.of(OptionValues.of(set), "relay-1", defaults -> {
            Map<String, Object> p = new LinkedHashMap<>(defaults);
            p.put("linger.ms", "7");
            return p;
        }, TopicRoute.defaultRoute(), Clock.systemUTC(), Tracing.OFF);
    }

    @Test
    void everyOptionIsReadByNameWithItsDefault() {
        PollerSettings s = settings(Map.of());
        assertThat(s.schema()).isEqualTo(RelayOptions.SCHEMA.defaultValue());
        assertThat(s.timing().lease()).isEqualTo(RelayOptions.LEASE_DURATION.defaultValue());
        assertThat(s.maxAttempts()).isEqualTo(RelayOptions.MAX_ATTEMPTS.defaultValue());
        assertThat(s.partitions()).isEqualTo(PollerOptions.PARTITIONS.defaultValue());
        assertThat(s.batchSize()).isEqualTo(PollerOptions.BATCH_SIZE.defaultValue());
        assertThat(s.listenNotify()).isEqualTo(PollerOptions.LISTEN_NOTIFY.defaultValue());
        assertThat(s.afterPublish()).isEqualTo(PollerOptions.AFTER_PUBLISH.defaultValue());
        assertThat(s.parkPolicy()).isEqualTo(PollerOptions.PARK_POLICY.defaultValue());
        assertThat(s.maxPollDelay()).isEqualTo(PollerOptions.MAX_POLL_DELAY.defaultValue());
        assertThat(s.pipelineClaims()).isEqualTo(PollerOptions.PIPELINE_CLAIMS.defaultValue());
        assertThat(s.claimLoops()).isEqualTo(PollerOptions.defaultClaimLoops(PollerOptions.PARTITIONS.defaultValue()))
                .isEqualTo(2);
    }

    @Test
    void claimLoopsUnsetIsTwoOrThePartitionsWhenFewerAndAValueGivenAboveThePartitionsIsRefused() {
        assertThat(PollerOptions.CLAIM_LOOPS.defaultValue()).as("computed from the partitions").isNull();
        assertThat(PollerOptions.CLAIM_LOOPS.defaultText()).isEqualTo("2, or partitions when that is fewer");
        assertThat(settings(Map.of(PollerOptions.PARTITIONS, 1)).claimLoops()).isEqualTo(1);
        assertThat(settings(Map.of(PollerOptions.PARTITIONS, 2)).claimLoops()).isEqualTo(2);
        assertThat(settings(Map.of(PollerOptions.PARTITIONS, 4096)).claimLoops()).isEqualTo(2);
        assertThat(settings(Map.of(PollerOptions.PARTITIONS, 1, PollerOptions.CLAIM_LOOPS, 1)).claimLoops()).isEqualTo(1);
        assertThatThrownBy(() -> settings(Map.of(PollerOptions.PARTITIONS, 1, PollerOptions.CLAIM_LOOPS, 2)))
                .hasMessageStartingWith("claimLoops must be at most partitions (1), got 2");
    }

    @Test
    void everyOptionSetIsTheOneUsed() {
        Map<RelayOption<?>, Object> set = new LinkedHashMap<>();
        set.put(RelayOptions.SCHEMA, "billing");
        set.put(RelayOptions.LEASE_DURATION, Duration.ofSeconds(6));
        set.put(RelayOptions.MAX_ATTEMPTS, 3);
        set.put(PollerOptions.PARTITIONS, 8);
        set.put(PollerOptions.BATCH_SIZE, 500);
        set.put(PollerOptions.LISTEN_NOTIFY, true);
        set.put(PollerOptions.AFTER_PUBLISH, AfterPublish.MARK);
        set.put(PollerOptions.PARK_POLICY, ParkPolicy.HOLD_AGGREGATE);
        set.put(PollerOptions.MAX_POLL_DELAY, Duration.ofMillis(40));
        set.put(PollerOptions.PIPELINE_CLAIMS, true);
        set.put(PollerOptions.CLAIM_LOOPS, 3);
        PollerSettings s = settings(set);
        assertThat(s.schema()).isEqualTo("billing");
        assertThat(s.timing().lease()).isEqualTo(Duration.ofSeconds(6));
        assertThat(s.maxAttempts()).isEqualTo(3);
        assertThat(s.partitions()).isEqualTo(8);
        assertThat(s.batchSize()).isEqualTo(500);
        assertThat(s.listenNotify()).isTrue();
        assertThat(s.afterPublish()).isEqualTo(AfterPublish.MARK);
        assertThat(s.parkPolicy()).isEqualTo(ParkPolicy.HOLD_AGGREGATE);
        assertThat(s.maxPollDelay()).isEqualTo(Duration.ofMillis(40));
        assertThat(s.pipelineClaims()).isTrue();
        assertThat(s.claimLoops()).isEqualTo(3);
    }

    @Test
    void theHeartbeatIsTheLeaseRenewalButAtLeastEverySecond() {
        assertThat(settings(Map.of()).heartbeatInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(settings(Map.of(RelayOptions.LEASE_DURATION, Duration.ofSeconds(2))).heartbeatInterval())
                .isEqualTo(Duration.ofSeconds(2).dividedBy(3));
    }

    @Test
    void releasesAndStopsWaitForTheBatchInFlight() {
        PollerSettings s = settings(Map.of(RelayOptions.LEASE_DURATION, Duration.ofSeconds(6)));
        assertThat(s.releaseLockTimeout()).isEqualTo(Duration.ofSeconds(4));
        assertThat(s.stopWait()).isEqualTo(Duration.ofSeconds(32));
    }

    @Test
    void theProducerDefaultsBoundSendByTheAckBudgetAndNameTheInstance() {
        PollerSettings s = settings(Map.of(RelayOptions.LEASE_DURATION, Duration.ofSeconds(6)));
        assertThat(s.producerConfig()).containsEntry("max.block.ms", "2000")
                .containsEntry("client.id", "outboxkit-poll-relay-1").containsEntry("linger.ms", "7");
        assertThat(settings(Map.of()).producerConfig()).containsEntry("max.block.ms", "5000");
    }

    @Test
    void logLinesNameTheRelayAndItsInstance() {
        PollerSettings s = settings(Map.of());
        assertThat(s.instanceId()).isEqualTo("relay-1");
        assertThat(s.logPrefix()).isEqualTo("poll relay relay-1");
    }
}
