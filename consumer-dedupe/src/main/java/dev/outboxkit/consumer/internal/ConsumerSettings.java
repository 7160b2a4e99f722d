package dev.outboxkit.consumer.internal;

import dev.outboxkit.consumer.BatchHandler;
import dev.outboxkit.consumer.EventHandler;
import dev.outboxkit.consumer.LateArrivalPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Not API: public for {@code dev.outboxkit.consumer.DedupeConsumer}.
 *
 * <p>A validated, immutable consumer configuration (built by {@code DedupeConsumer.Builder}).
 */
public record ConsumerSettings(
        String clientId,
        String bootstrapServers,
        Map<String, Object> kafkaProperties,
        Map<String, Object> consumerConfig,
        String group,
        List<String> topics,
        Pattern topicPattern,
        DataSource dataSource,
        String schema,
        EventHandler handler,
        BatchHandler batchHandler,
        String idHeader,
        Function<String, String> deadLetterTopic,
        int maxAttempts,
        Duration backoff,
        Duration maxBackoff,
        Duration retention,
        Duration retentionCheckInterval,
        LateArrivalPolicy lateArrivalPolicy,
        MeterRegistry meterRegistry,
        Clock clock,
        Duration pollTimeout,
        Duration closeTimeout,
        Runnable afterDatabaseCommit) {
}
