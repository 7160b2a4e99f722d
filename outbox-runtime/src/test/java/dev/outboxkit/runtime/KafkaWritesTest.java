package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The write rule on a clock the test moves: silence counts only while writes wait, restarts with each
 * acknowledgement, survives a refusal and its retry. Against real brokers below min.insync.replicas:
 * reliability's MinInsyncReplicasTest.
 */
class KafkaWritesTest {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final KafkaWrites writes = new KafkaWrites("records", now::get);

    private void pass(Duration d) {
        now.addAndGet(d.toNanos());
    }

    @Test
    void nothingWaitingIsNothingToJudgeHoweverLongItIsQuiet() {
        assertThat(writes.problem()).isNull();
        writes.handedOver("t").answered(null);
        pass(Duration.ofMinutes(5));
        assertThat(writes.silence()).isZero();
        assertThat(writes.problem()).isNull();
    }

    @Test
    void writesWaitingWithNoAcknowledgementForTheLimitMakeAProblemThatTheNextAcknowledgementEnds() {
        KafkaWrites.Pending first = writes.handedOver("t");
        writes.handedOver("t");
        pass(KafkaWrites.SILENCE_LIMIT.minusMillis(1));
        assertThat(writes.problem()).isNull();
        pass(Duration.ofMillis(1));
        assertThat(writes.problem()).isEqualTo("Kafka accepts no writes now: it has acknowledged none of this client's "
                + "records for 5 s (2 waiting)");
        assertThat(writes.silenceSeconds()).isEqualTo(5.0);

        first.answered(null);
        assertThat(writes.problem()).as("one acknowledgement: acks flow again").isNull();
        assertThat(writes.waiting()).isEqualTo(1);
        pass(KafkaWrites.SILENCE_LIMIT);
        assertThat(writes.problem()).as("the other still waits, judged from the last acknowledgement").contains("1 waiting");
    }

    @Test
    void aDeepBufferWhoseAcknowledgementsFlowStaysReady() {
        List<KafkaWrites.Pending> buffered = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            buffered.add(writes.handedOver("t"));
        }
        for (int i = 0; i < 60; i++) { // one minute of acknowledgements, one a second, the buffer still deep
            pass(Duration.ofSeconds(1));
            buffered.get(i).answered(null);
            assertThat(writes.problem()).isNull();
        }
        assertThat(writes.waiting()).isEqualTo(100_000 - 60);
    }

    @Test
    void aRefusalAndItsRetryDoNotRestartTheClockAndARecordsOwnRefusalIsNoRefusalOfWrites() {
        KafkaWrites.Pending w = writes.handedOver("t");
        pass(Duration.ofSeconds(3));
        w.answered(new NotEnoughReplicasException("below min.insync.replicas"));
        assertThat(writes.silence()).as("nothing waits between the refusal and its retry").isZero();
        writes.handedOver("t"); // the retry
        pass(Duration.ofSeconds(2));
        assertThat(writes.problem()).as("judged from the first write, 5 s ago")
                .contains("for 5 s (1 waiting; last refusal: ").contains("NotEnoughReplicasException");

        KafkaWrites other = new KafkaWrites("records", now::get);
        KafkaWrites.Pending big = other.handedOver("t");
        big.answered(new RecordTooLargeException("too large"));
        other.handedOver("t");
        pass(Duration.ofSeconds(4));
        assertThat(other.silence()).as("a poison answer is an answer: the clock started with the next write")
                .isEqualTo(Duration.ofSeconds(4));
    }

    @Test
    void itKnowsWhetherKafkaAcknowledgedAWriteSinceAMoment() {
        long before = now.get();
        assertThat(writes.acknowledgedSince(before)).isFalse();
        pass(Duration.ofMillis(1));
        writes.handedOver("t").answered(new NotEnoughReplicasException("below min.insync.replicas"));
        assertThat(writes.acknowledgedSince(before)).isFalse();
        writes.handedOver("t").answered(null);
        assertThat(writes.acknowledgedSince(before)).isTrue();
        assertThat(writes.acknowledgedSince(now.get())).isFalse();
    }

    @Test
    void eachWriteCountsOnceAndAnAbandonedOneOnlyStopsWaiting() {
        KafkaWrites.Pending w = writes.handedOver(null);
        w.abandoned();
        w.answered(null);
        w.abandoned();
        assertThat(writes.waiting()).isZero();
        pass(Duration.ofMinutes(1));
        assertThat(writes.problem()).isNull();
    }

    @Test
    void topicsAreCollectedOnceEachAndNewOnesHandedOutOnce() {
        writes.handedOver("a");
        writes.handedOver("a");
        writes.handedOver("b");
        writes.handedOver(null);
        assertThat(writes.newTopics()).containsExactly("a", "b");
        writes.handedOver("a");
        writes.handedOver("c");
        assertThat(writes.newTopics()).containsExactly("c");
        assertThat(writes.topics()).containsExactlyInAnyOrder("a", "b", "c");
    }

    @Test
    void stopOnFailureCountsEachSendUntilKafkaAnswersItAndASendThatThrowsNotAtAll() {
        List<MockProducer<byte[], byte[]>> made = new ArrayList<>();
        StopOnFailure producers = new StopOnFailure(() -> {
            MockProducer<byte[], byte[]> p = new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
            made.add(p);
            return p;
        }, "test", writes);
        producers.send(producers.producer(), traced(), true, null);
        producers.send(producers.producer(), traced(), true, null);
        assertThat(writes.waiting()).isEqualTo(2);
        assertThat(writes.newTopics()).containsExactly("orders");
        made.get(0).completeNext();
        assertThat(writes.waiting()).isEqualTo(1);
        made.get(0).close();
        try {
            producers.send(producers.producer(), traced(), true, null);
        } catch (IllegalStateException closed) {
            // a closed producer throws inside send(): never sent, not counted
        }
        assertThat(writes.waiting()).isEqualTo(1);
    }

    private static TracedRecords.Traced traced() {
        return new TracedRecords.Traced(new ProducerRecord<>("orders", new byte[0], new byte[0]), PublishSpan.NONE);
    }
}
