package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.relay.cdc.CdcOptions;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.OptionValues;
import dev.outboxkit.runtime.Tracing;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The CDC relay's configuration for tests of its internal classes, built by option name as {@code CdcRelay.Builder}
 * builds it: a short lease and shutdown, small batches, and the options each test sets on top.
 */
final class TestSettings {

    private TestSettings() {
    }

    /** The test defaults with {@code slot} and {@code options} on top; no producer overrides, no tracing. */
    static CdcSettings of(DatabaseLogin login, String slot, String instanceId, Map<RelayOption<?>, Object> options) {
        Map<RelayOption<?>, Object> set = new HashMap<>();
        set.put(CdcOptions.SLOT_NAME, slot);
        set.put(RelayOptions.LEASE_DURATION, Duration.ofSeconds(5));
        set.put(CdcOptions.HEARTBEAT_INTERVAL, Duration.ofSeconds(1));
        set.put(CdcOptions.MAX_BATCH_SIZE, 100);
        set.put(CdcOptions.MAX_IN_FLIGHT, 1000);
        set.put(CdcOptions.SHUTDOWN_TIMEOUT, Duration.ofSeconds(5));
        set.putAll(options);
        return exactly(login, instanceId, set, noKafka -> Map.of());
    }

    /**
     * {@code options} over the options' own defaults (no test defaults), with the producer configuration that
     * {@code producerConfig} makes of the relay's defaults (it stands in for {@code RelayBuilder.producerConfig}).
     */
    static CdcSettings exactly(DatabaseLogin login, String instanceId, Map<RelayOption<?>, Object> options,
                               Function<Map<String, ?>, Map<String, Object>> producerConfig) {
        return CdcSettings.of(OptionValues.of(options), login, instanceId, producerConfig, TopicRoute.defaultRoute(),
                new SimpleMeterRegistry(), Clock.systemUTC(), Tracing.OFF);
    }
}
