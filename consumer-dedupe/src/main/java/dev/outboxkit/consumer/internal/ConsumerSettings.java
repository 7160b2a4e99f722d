package dev.outboxkit.consumer.internal;

import dev.outboxkit.consumer.BatchHandler;
import dev.outboxkit.consumer.EventHandler;
import dev.outboxkit.consumer.LateArrivalPolicy;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.Topics;
import dev.outboxkit.relay.UnsafeConfigurationException;
import dev.outboxkit.runtime.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Not API: public for {@code dev.outboxkit.consumer.DedupeConsumer}.
 *
 * <p>A validated, immutable consumer configuration (built by {@code DedupeConsumer.Builder}). The
 * constructor checks every setting in a fixed order and throws for the first that is missing or
 * invalid, naming it.
 *
 * @param clientId         null: {@code client.id} from kafkaProperties, else a numbered default
 * @param bootstrapServers null: {@code bootstrap.servers} from kafkaProperties
 * @param meterRegistry    null: a private {@code SimpleMeterRegistry}
 */
public record ConsumerSettings(
        String clientId,
        String bootstrapServers,
        Map<String, Object> kafkaProperties,
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
        Runnable afterDatabaseCommit,
        Tracing tracing) {

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    /**
     * @throws UnsafeConfigurationException when {@code enable.auto.commit=true} is passed
     * @throws IllegalArgumentException     naming the first setting that is missing or invalid
     */
    public ConsumerSettings {
        Map<String, Object> props = new LinkedHashMap<>(kafkaProperties);
        Object autoCommit = props.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
        if (autoCommit != null && !autoCommit.toString().trim().equalsIgnoreCase("false")) {
            throw new UnsafeConfigurationException(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, autoCommit.toString(),
                    "the consumer commits offsets itself, only after the database transaction committed; auto-commit "
                            + "could commit the offset of an event that was never applied, and a crash would lose it. "
                            + "Remove the setting");
        }
        for (String key : List.of(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG)) {
            Object value = props.get(key);
            if (value != null && !value.equals(ByteArrayDeserializer.class)
                    && !value.toString().equals(ByteArrayDeserializer.class.getName())) {
                throw new IllegalArgumentException("kafkaProperties " + key + "=" + value + " is not supported: the "
                        + "consumer reads raw bytes (ByteArrayDeserializer) and decodes them itself; remove the setting");
            }
        }
        if (bootstrapServers == null && props.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG) != null) {
            bootstrapServers = props.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG).toString();
        }
        if (bootstrapServers == null || bootstrapServers.isBlank()) {
            throw new IllegalArgumentException("bootstrapServers must be set (or bootstrap.servers in kafkaProperties)");
        }
        if (group == null || group.isBlank()) {
            throw new IllegalArgumentException("group must be set to the consumer group id");
        }
        Object groupId = props.get(ConsumerConfig.GROUP_ID_CONFIG);
        if (groupId != null && !groupId.toString().equals(group)) {
            throw new IllegalArgumentException("kafkaProperties group.id=" + groupId + " differs from group=" + group
                    + "; set the group with group(...) only");
        }
        if ((topics == null) == (topicPattern == null)) {
            throw new IllegalArgumentException("set exactly one of topics and topicPattern"
                    + (topics != null ? " (both are set)" : " (neither is set)"));
        }
        if (topics != null) {
            if (topics.isEmpty()) {
                throw new IllegalArgumentException("topics must not be empty");
            }
            for (String topic : topics) {
                String problem = Topics.problem(topic);
                if (problem != null) {
                    throw new IllegalArgumentException("topics: " + problem);
                }
            }
        }
        Objects.requireNonNull(dataSource, "dataSource must be set");
        Identifiers.requireValid("schema", schema);
        if (handler == null && batchHandler == null) {
            throw new IllegalArgumentException("set a handler or a batchHandler (or both)");
        }
        if (idHeader == null || idHeader.isBlank()) {
            throw new IllegalArgumentException("idHeader must not be blank");
        }
        Objects.requireNonNull(deadLetterTopic, "deadLetterTopic must not be null");
        Objects.requireNonNull(lateArrivalPolicy, "lateArrivalPolicy must not be null");
        if (topics != null) {
            for (String topic : topics) {
                checkDerivedTopic("deadLetterTopic", topic, deadLetterTopic.apply(topic));
                if (lateArrivalPolicy.action() == LateArrivalPolicy.Action.ROUTE) {
                    checkDerivedTopic("lateArrivalPolicy", topic, lateArrivalPolicy.reviewTopic(topic));
                }
            }
        }
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw new IllegalArgumentException("maxAttempts must be between 1 and 100, got " + maxAttempts);
        }
        requireBetween("backoff", backoff, Duration.ofMillis(1), Duration.ofMinutes(10));
        requireBetween("maxBackoff", maxBackoff, backoff, Duration.ofHours(1));
        requireBetween("retention", retention, Duration.ofMinutes(1), Duration.ofDays(3650));
        requireBetween("retentionCheckInterval", retentionCheckInterval, Duration.ZERO, Duration.ofDays(30));
        requireBetween("pollTimeout", pollTimeout, Duration.ofMillis(10), Duration.ofMinutes(1));
        requireBetween("closeTimeout", closeTimeout, Duration.ofSeconds(1), Duration.ofMinutes(10));
        Objects.requireNonNull(clock, "clock must not be null");

        kafkaProperties = Map.copyOf(props);
        if (clientId == null) {
            clientId = props.containsKey(ConsumerConfig.CLIENT_ID_CONFIG)
                    ? props.get(ConsumerConfig.CLIENT_ID_CONFIG).toString()
                    : "outboxkit-consumer-" + group + "-" + INSTANCES.incrementAndGet();
        }
        if (meterRegistry == null) {
            meterRegistry = new SimpleMeterRegistry();
        }
        if (tracing == null) {
            tracing = Tracing.OFF;
        }
    }

    /** The Kafka consumer's configuration: our defaults, then kafkaProperties, then what the consumer must own. */
    public Map<String, Object> consumerConfig() {
        Map<String, Object> consumerConfig = new LinkedHashMap<>();
        consumerConfig.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerConfig.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1000);
        consumerConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        consumerConfig.putAll(kafkaProperties);
        consumerConfig.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        consumerConfig.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        consumerConfig.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        consumerConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumerConfig.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerConfig.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return Map.copyOf(consumerConfig);
    }

    private static void checkDerivedTopic(String setting, String source, String derived) {
        String problem = Topics.problem(derived);
        if (problem != null) {
            throw new IllegalArgumentException(setting + " gives an illegal topic for " + source + ": " + problem);
        }
        if (derived.equals(source)) {
            throw new IllegalArgumentException(setting + " sends records of " + source + " back to " + source
                    + "; choose another topic");
        }
    }

    private static void requireBetween(String name, Duration value, Duration min, Duration max) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " must be between " + human(min) + " and " + human(max)
                    + ", got " + human(value));
        }
    }

    private static String human(Duration d) {
        return d.toString().substring(2).toLowerCase(Locale.ROOT);
    }
}
