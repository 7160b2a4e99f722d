package dev.outboxkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.relay.Relay;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.OutboxWriter;
import dev.outboxkit.writer.WriteMode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.security.Principal;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Status;
import org.springframework.mock.env.MockEnvironment;

/** The parts that need neither PostgreSQL nor Kafka. */
class OutboxkitUnitTest {

    @Test
    void propertyDefaultsAreTheLibrariesDefaults() {
        OutboxkitProperties p = new OutboxkitProperties();
        assertThat(p.getSchema()).isEqualTo(OutboxWriter.DEFAULT_SCHEMA);
        assertThat(p.getWriter().getMode()).isEqualTo(WriteMode.KEEP);
        assertThat(p.getWriter().getMaxPayloadBytes()).isEqualTo(OutboxWriter.DEFAULT_MAX_PAYLOAD_BYTES);
        assertThat(p.getIdempotency().getLease()).isEqualTo(IdempotencyKeys.DEFAULT_LEASE);
        assertThat(p.getIdempotency().getRetention()).isEqualTo(IdempotencyKeys.DEFAULT_RETENTION);
        assertThat(p.getRelay().getMode()).isEqualTo(OutboxkitProperties.RelayMode.NONE);
    }

    /** A relay that counts its calls (a unit test may stub; the real relays run in RelayAndConsumerTest). */
    static final class CountingRelay implements Relay {
        final AtomicInteger starts = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();
        volatile boolean ready;

        @Override
        public void start() {
            starts.incrementAndGet();
        }

        @Override
        public Health health() {
            return new Health(true, ready, ready ? "holding 4/4" : "Kafka failing for 12 s");
        }

        @Override
        public void close() {
            closes.incrementAndGet();
        }
    }

    @Test
    void theLifecycleStartsAndStopsTheRelayOnceAndTheIndicatorFollowsReadiness() {
        java.util.List<CountingRelay> built = new java.util.ArrayList<>();
        RelayLifecycle lifecycle = new RelayLifecycle(() -> {
            CountingRelay r = new CountingRelay();
            built.add(r);
            return r;
        });
        CountingRelay relay = built.get(0);
        lifecycle.start();
        lifecycle.start();
        assertThat(lifecycle.isRunning()).isTrue();
        RelayHealthIndicator indicator = new RelayHealthIndicator(lifecycle);
        assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
        assertThat(indicator.health().getDetails()).containsEntry("detail", "Kafka failing for 12 s");
        relay.ready = true;
        assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
        lifecycle.stop();
        lifecycle.stop();
        assertThat(lifecycle.isRunning()).isFalse();
        assertThat(relay.starts).hasValue(1);
        assertThat(relay.closes).hasValue(1);

        lifecycle.start();   // a closed relay cannot start again: a stopped and restarted context gets a new one
        assertThat(built).hasSize(2);
        assertThat(built.get(1).starts).hasValue(1);
        assertThat(relay.starts).hasValue(1);
        assertThat(indicator.health().getStatus()).as("the new relay's readiness").isEqualTo(Status.DOWN);
        lifecycle.stop();
        assertThat(built.get(1).closes).hasValue(1);
    }

    @Test
    void relaySettingsFallBackToSpringsAndRefuseUnknownOptions() {
        OutboxkitProperties p = pollRelay();
        p.getRelay().getOptions().put("batch-sise", "10");
        RelaySettings settings = withSpringsConnections(p);
        assertThat(settings.bootstrapServers).isEqualTo("k:9092");
        assertThat(settings.jdbcUrl).isEqualTo("jdbc:postgresql://db/app");
        assertThat(settings.username).isEqualTo("app");
        assertThatThrownBy(() -> PollRelays.build(settings)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[batch-sise]").hasMessageContaining("batch-size");
        p.getRelay().getOptions().clear();
        p.getRelay().getOptions().put("lease-duration", "soon");
        assertThatThrownBy(() -> PollRelays.build(settings)).hasMessageContaining("outboxkit.relay.options.lease-duration");
        assertThatThrownBy(() -> new RelaySettings(p, new MockEnvironment(), new SimpleMeterRegistry(), null))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("spring.kafka.bootstrap-servers");
    }

    @Test
    void onePartitionBuildsWithoutClaimLoopsAndTwoLoopsGivenAreRefused() {
        OutboxkitProperties p = pollRelay();
        p.getRelay().getOptions().put("partitions", "1");
        RelaySettings settings = withSpringsConnections(p);
        PollRelays.build(settings).close(); // claim-loops unset: the default fits the one partition (nothing connects yet)
        p.getRelay().getOptions().put("claim-loops", "2");
        assertThatThrownBy(() -> PollRelays.build(settings))
                .hasMessageContaining("claimLoops must be at most partitions (1), got 2");
    }

    private static OutboxkitProperties pollRelay() {
        OutboxkitProperties p = new OutboxkitProperties();
        p.getRelay().setMode(OutboxkitProperties.RelayMode.POLL);
        return p;
    }

    /** The relay's settings with Kafka and the database from Spring's own properties. */
    private static RelaySettings withSpringsConnections(OutboxkitProperties p) {
        MockEnvironment env = new MockEnvironment().withProperty("spring.kafka.bootstrap-servers", "k:9092")
                .withProperty("spring.datasource.url", "jdbc:postgresql://db/app").withProperty("spring.datasource.username", "app");
        return new RelaySettings(p, env, new SimpleMeterRegistry(), null);
    }

    @Test
    void scopesSeparateCallersAndStayWithinTheLimit() {
        Principal alice = () -> "alice";
        assertThat(IdempotencyFilter.scope("POST /transfers", null)).isEqualTo("POST /transfers");
        assertThat(IdempotencyFilter.scope("POST /transfers", alice)).isEqualTo("POST /transfers caller=alice");
        String longName = "x".repeat(400);
        String scope = IdempotencyFilter.scope("POST /transfers", () -> longName);
        assertThat(scope).startsWith("POST /transfers caller-sha256=").hasSizeLessThanOrEqualTo(IdempotencyKeys.MAX_SCOPE_LENGTH);
        assertThat(IdempotencyFilter.scope("POST /transfers", () -> longName + "y")).isNotEqualTo(scope);
    }

    @Test
    void aCommitFailureIsUnknownUnlessPostgresqlRefusedIt() {
        assertThat(SpringWorkTransaction.outcomeUnknown(new RuntimeException(new java.sql.SQLException("closed", "08006")))).isTrue();
        assertThat(SpringWorkTransaction.outcomeUnknown(new RuntimeException(new java.sql.SQLException("Connection is closed")))).isTrue();
        assertThat(SpringWorkTransaction.outcomeUnknown(new RuntimeException(new java.sql.SQLException("serialization", "40001")))).isFalse();
        assertThat(SpringWorkTransaction.outcomeUnknown(new RuntimeException(new java.sql.SQLException("deferred fk", "23503")))).isFalse();
        assertThat(SpringWorkTransaction.outcomeUnknown(new org.springframework.transaction.UnexpectedRollbackException("rb"))).isFalse();
    }
}
