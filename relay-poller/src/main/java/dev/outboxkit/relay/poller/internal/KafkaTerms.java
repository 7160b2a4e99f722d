package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.TopicRoute;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>How the {@link Supervisor} reaches Kafka, read once from the relay's settings.
 *
 * @param producerConfig the checked producer configuration (the reachability probe and the TLS check use it)
 * @param route          where records go (the probe looks at those topics)
 * @param producers      makes a claim loop's producer from that configuration (tests pass a MockProducer)
 */
public record KafkaTerms(Map<String, Object> producerConfig, TopicRoute route,
                         Supplier<Producer<byte[], byte[]>> producers) {
}
