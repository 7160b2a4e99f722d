package dev.outboxkit.relay;

import dev.outboxkit.core.spi.RecordLimits;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Producer settings for relays: tuned defaults, user overrides on top, and a refusal of any
 * override that would break "forget only after Kafka acknowledged it" or per-aggregate order.
 */
public final class ProducerSafety {

    /** The largest record a relay sends by default; the writer's payload limit matches it. */
    public static final int DEFAULT_MAX_REQUEST_SIZE = RecordLimits.DEFAULT_MAX_REQUEST_BYTES;

    private ProducerSafety() {
    }

    /** Defaults every relay starts from (one request in flight per broker, see the comment inside). */
    public static Map<String, Object> defaults() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        // One produce request in flight per broker, for both relays. With more, a batch Kafka refuses can be
        // overtaken by the next one: a producer's first batch to a partition whose leader does not serve it yet (a
        // topic created or auto-created a moment ago) is refused while the next batch is appended, then lands after
        // it (KAFKA-14359); a too-large batch split by the producer does the same. Either way an aggregate's events
        // arrive out of order. An override up to 5 is allowed (check), at that risk.
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, "67108864");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(DEFAULT_MAX_REQUEST_SIZE));
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    /**
     * Defaults, then {@code overrides}, checked.
     *
     * @throws UnsafeConfigurationException naming the first key that would weaken a guarantee
     */
    public static Map<String, Object> producerConfig(String bootstrapServers, Map<String, ?> overrides) {
        Map<String, Object> p = defaults();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        if (overrides != null) {
            p.putAll(overrides);
        }
        check(p);
        return Collections.unmodifiableMap(p);
    }

    /** Refuses settings that would lose or reorder events. */
    public static void check(Map<String, ?> config) {
        String acks = string(config.get(ProducerConfig.ACKS_CONFIG));
        if (acks != null && !acks.equals("all") && !acks.equals("-1")) {
            throw new UnsafeConfigurationException(ProducerConfig.ACKS_CONFIG, acks,
                    "a relay forgets a row once Kafka acknowledged it, so it needs acks=all (a leader-only ack can be lost)");
        }
        String idempotence = string(config.get(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG));
        if (idempotence != null && !idempotence.equalsIgnoreCase("true")) {
            throw new UnsafeConfigurationException(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotence,
                    "without the idempotent producer, retries can duplicate and reorder records of one aggregate");
        }
        String inFlight = string(config.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION));
        if (inFlight != null) {
            int n;
            try {
                n = Integer.parseInt(inFlight.trim());
            } catch (NumberFormatException e) {
                throw new UnsafeConfigurationException(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, inFlight,
                        "it must be a whole number from 1 to 5");
            }
            if (n < 1 || n > 5) {
                throw new UnsafeConfigurationException(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, inFlight,
                        "the idempotent producer keeps order only with 1 to 5 requests in flight");
            }
        }
        Object retries = config.get(ProducerConfig.RETRIES_CONFIG);
        if (retries != null && string(retries).trim().equals("0")) {
            throw new UnsafeConfigurationException(ProducerConfig.RETRIES_CONFIG, "0",
                    "retries=0 turns every transient broker error into a failed batch; leave it unset");
        }
        Object transactional = config.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        if (transactional != null) {
            throw new UnsafeConfigurationException(ProducerConfig.TRANSACTIONAL_ID_CONFIG, string(transactional),
                    "relays do not use Kafka transactions; the database decides what is published");
        }
    }

    private static String string(Object o) {
        return o == null ? null : o.toString().toLowerCase(Locale.ROOT).trim();
    }
}
