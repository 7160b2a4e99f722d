package dev.outboxkit.benchmarks.peer.namastack;

import io.namastack.outbox.handler.OutboxRecordMetadata;
import io.namastack.outbox.handler.OutboxTypedHandler;
import java.util.concurrent.ExecutionException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * The record handler: sends the payload to the run's topic ({@code peer.topic}) keyed by the record key and waits
 * for the broker's acknowledgement before returning. namastack-outbox marks a record completed when its handler
 * returns and retries it when the handler throws, so a handler that returned before the acknowledgement could lose
 * the event; waiting is what its documentation asks of handlers (idempotent, throw on failure) and what its own
 * later Kafka module does. 1.0.0 ships no Kafka module, so this is the handler an application writes. Public:
 * namastack-outbox invokes handler methods reflectively and cannot reach a package-private class's.
 */
@Component
public class KafkaPublishingHandler implements OutboxTypedHandler<TransferMade> {

    private final KafkaTemplate<String, Object> kafka;
    private final String topic;

    public KafkaPublishingHandler(KafkaTemplate<String, Object> kafka, @Value("${peer.topic}") String topic) {
        this.kafka = kafka;
        this.topic = topic;
    }

    @Override
    public void handle(TransferMade payload, OutboxRecordMetadata metadata) {
        try {
            kafka.send(topic, metadata.getKey(), payload).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending record " + payload.id() + " to " + topic, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Kafka refused record " + payload.id() + " for " + topic, e.getCause());
        }
    }
}
