package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.FencedException;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.relay.PublishFailure;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidRequiredAcksException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedCompressionTypeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PublishFailuresTest {

    /** Every exception a relay can see from the mapping, KafkaProducer.send or its future, and what it means. */
    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of(new InvalidEventException("reserved header 'id'"), PublishFailure.POISON),
                Arguments.of(new RecordTooLargeException("too large"), PublishFailure.POISON),
                Arguments.of(new RecordBatchTooLargeException("batch too large"), PublishFailure.POISON),
                Arguments.of(new InvalidTopicException("bad topic"), PublishFailure.POISON),
                Arguments.of(new InvalidRecordException("invalid record"), PublishFailure.POISON),
                Arguments.of(new SerializationException("cannot serialise"), PublishFailure.POISON),

                Arguments.of(new TimeoutException("expiring 1 record(s)"), PublishFailure.RETRIABLE),
                Arguments.of(new BufferExhaustedException("buffer full"), PublishFailure.RETRIABLE),
                Arguments.of(new NotEnoughReplicasException("isr"), PublishFailure.RETRIABLE),
                Arguments.of(new NotEnoughReplicasAfterAppendException("isr after append"), PublishFailure.RETRIABLE),
                Arguments.of(new NotLeaderOrFollowerException("leader moved"), PublishFailure.RETRIABLE),
                Arguments.of(new UnknownTopicOrPartitionException("no such topic yet"), PublishFailure.RETRIABLE),
                Arguments.of(new CorruptRecordException("crc"), PublishFailure.RETRIABLE),
                Arguments.of(new NetworkException("disconnected"), PublishFailure.RETRIABLE),
                Arguments.of(new OutOfOrderSequenceException("sequence"), PublishFailure.RETRIABLE),
                Arguments.of(new UnknownProducerIdException("producer id"), PublishFailure.RETRIABLE),
                Arguments.of(new InvalidProducerEpochException("epoch"), PublishFailure.RETRIABLE),
                Arguments.of(new UnknownServerException("broker bug"), PublishFailure.RETRIABLE),
                Arguments.of(interruptException(), PublishFailure.RETRIABLE),
                Arguments.of(new KafkaException("Producer closed while send in progress"), PublishFailure.RETRIABLE),
                Arguments.of(new IllegalStateException("Cannot perform operation after producer has been closed"),
                        PublishFailure.RETRIABLE),
                Arguments.of(new RuntimeException("something nobody listed"), PublishFailure.RETRIABLE),

                Arguments.of(new TopicAuthorizationException("no WRITE on topic"), PublishFailure.FATAL),
                Arguments.of(new ClusterAuthorizationException("no IDEMPOTENT_WRITE"), PublishFailure.FATAL),
                Arguments.of(new TransactionalIdAuthorizationException("no transactional id ACL"), PublishFailure.FATAL),
                Arguments.of(new SaslAuthenticationException("bad password"), PublishFailure.FATAL),
                Arguments.of(new SslAuthenticationException("bad certificate"), PublishFailure.FATAL),
                Arguments.of(new UnsupportedVersionException("broker too old"), PublishFailure.FATAL),
                Arguments.of(new UnsupportedForMessageFormatException("old format"), PublishFailure.FATAL),
                Arguments.of(new UnsupportedCompressionTypeException("zstd"), PublishFailure.FATAL),
                Arguments.of(new InvalidRequiredAcksException("acks"), PublishFailure.FATAL),
                Arguments.of(new InvalidTimestampException("timestamp out of range"), PublishFailure.FATAL),
                Arguments.of(new ProducerFencedException("another producer with this transactional.id"), PublishFailure.FATAL),
                Arguments.of(new ConfigException("bootstrap.servers", "", "no resolvable bootstrap urls"), PublishFailure.FATAL),

                Arguments.of(new FencedException("lease lost"), PublishFailure.FENCED));
    }

    /** Its constructor interrupts the thread that makes it; here it is only data. */
    private static InterruptException interruptException() {
        InterruptException e = new InterruptException("interrupted", new InterruptedException());
        Thread.interrupted();
        return e;
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("table")
    void eachExceptionHasItsOutcomeAlsoWhenAFutureOrAWrapperCarriesIt(Throwable error, PublishFailure expected) {
        assertThat(PublishFailures.outcome(error)).isEqualTo(expected);
        // as a future reports it, and wrapped once more (KafkaException around the real cause, as the producer does)
        PublishFailures.Classified viaFuture = PublishFailures.classify(new ExecutionException(error));
        assertThat(viaFuture.outcome()).isEqualTo(expected);
        PublishFailures.Classified wrapped = PublishFailures.classify(
                new CompletionException(new KafkaException("send failed", error)));
        assertThat(wrapped.outcome()).isEqualTo(expected);
        if (viaFuture.known()) {
            assertThat(viaFuture.cause()).as("the deciding exception is the one that is recorded").isSameAs(error);
            assertThat(viaFuture.errorClass()).isEqualTo(error.getClass().getName());
        }
    }

    @Test
    void theOutermostKnownExceptionDecides() {
        // a retriable timeout caused by something that happens to be poison elsewhere is still a timeout
        assertThat(PublishFailures.outcome(new TimeoutException("slow", new RecordTooLargeException("x"))))
                .isEqualTo(PublishFailure.RETRIABLE);
        // a plain KafkaException looks through to the fatal cause the producer keeps failing with
        assertThat(PublishFailures.outcome(new KafkaException("producer in error state",
                new ProducerFencedException("fenced")))).isEqualTo(PublishFailure.FATAL);
    }

    @Test
    void unknownFailuresAreRetriedAndSaySo() {
        PublishFailures.Classified c = PublishFailures.classify(new ExecutionException(new IllegalArgumentException("odd")));
        assertThat(c.outcome()).isEqualTo(PublishFailure.RETRIABLE);
        assertThat(c.known()).isFalse();
        assertThat(c.describe()).isEqualTo("retriable (unclassified): java.lang.IllegalArgumentException: odd");
    }

    @Test
    void aCauseCycleEndsTheWalk() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);
        assertThat(PublishFailures.outcome(a)).isEqualTo(PublishFailure.RETRIABLE);
    }

    @Test
    void messagesAreOneBoundedLine() {
        assertThat(PublishFailures.message(new RuntimeException("first\n  second\r\nthird"))).isEqualTo("first second third");
        assertThat(PublishFailures.message(new RuntimeException((String) null))).isEqualTo("RuntimeException");
        assertThat(PublishFailures.message(new RuntimeException("x".repeat(5000)))).hasSize(2001).endsWith("…");
        assertThatThrownBy(() -> PublishFailures.classify(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void tagsAreTheLowerCaseNames() {
        assertThat(Stream.of(PublishFailure.values()).map(PublishFailure::tag))
                .containsExactly("retriable", "poison", "fatal", "fenced");
    }

    /** The README's table is the user's view of {@link PublishFailures#rules()}: every rule is listed with its outcome. */
    @Test
    void theDocumentedTableListsEveryRule() throws Exception {
        String doc = Files.readString(Path.of("README.md"));
        for (PublishFailures.Rule r : PublishFailures.rules()) {
            assertThat(doc).as("outbox-runtime/README.md lists " + r.type().getSimpleName())
                    .containsPattern("`" + r.type().getSimpleName() + "`[^\\n]*\\| " + r.outcome().name() + " \\|");
        }
    }
}
