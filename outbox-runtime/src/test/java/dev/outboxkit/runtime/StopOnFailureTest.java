package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The stop's bookkeeping, with Kafka's MockProducer deciding the answers. That the stop keeps a partition's order
 * against a real broker is proven by relay-debezium's FailedAckOrderTest.
 */
class StopOnFailureTest {

    private final List<MockProducer<byte[], byte[]>> made = new ArrayList<>();
    private final StopOnFailure producers = new StopOnFailure(() -> {
        MockProducer<byte[], byte[]> p = new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
        made.add(p);
        return p;
    }, "test");

    @Test
    void theFirstFailedRecordClosesTheProducerSoTheRecordsBehindItFailAndARenewMakesANewOne() {
        Future<RecordMetadata> first = send();
        send(); // queued behind it
        TimeoutException expired = new TimeoutException("Expiring 1 record(s): delivery.timeout.ms has passed");
        made.get(0).errorNext(expired);

        assertThat(made.get(0).closed()).as("closed from the failing callback").isTrue();
        assertThat(producers.stoppedBy()).isSameAs(expired);
        assertThat(first).isDone();
        assertThatThrownBy(() -> producers.producer().send(record())).as("nothing more is sent on it")
                .isInstanceOf(IllegalStateException.class);
        assertThat(producers.consequenceOfStop(expired)).as("the failure itself is the record's own").isFalse();
        assertThat(producers.consequenceOfStop(new IllegalStateException("producer closed"))).isTrue();

        Producer<byte[], byte[]> fresh = producers.renew();
        assertThat(made).hasSize(2);
        assertThat(fresh).isSameAs(made.get(1));
        assertThat(producers.stoppedBy()).isNull();
        assertThat(producers.renew()).as("a running producer is kept").isSameAs(fresh);
    }

    @Test
    void aPoisonRecordDoesNotStopTheProducer() {
        send();
        made.get(0).errorNext(new RecordTooLargeException("too large for the topic"));
        assertThat(made.get(0).closed()).isFalse();
        assertThat(producers.stoppedBy()).isNull();
    }

    @Test
    void aFailureInsideSendStopsItOnlyWhenAsked() {
        Producer<byte[], byte[]> p = producers.producer();
        producers.guard(p, false, null).onCompletion(null, new TimeoutException("no metadata within max.block.ms"));
        assertThat(producers.stoppedBy()).as("reported on the sending thread, not asked to stop").isNull();
        producers.guard(p, true, null).onCompletion(null, new TimeoutException("no metadata within max.block.ms"));
        assertThat(producers.stoppedBy()).isNotNull();
        assertThat(made.get(0).closed()).isTrue();
    }

    private Future<RecordMetadata> send() {
        Producer<byte[], byte[]> p = producers.producer();
        return p.send(record(), producers.guard(p, true, null));
    }

    private static ProducerRecord<byte[], byte[]> record() {
        return new ProducerRecord<>("t", new byte[] {1}, new byte[] {2});
    }
}
