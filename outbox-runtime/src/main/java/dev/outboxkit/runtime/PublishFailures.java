package dev.outboxkit.runtime;

import dev.outboxkit.core.FencedException;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.relay.PublishFailure;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.errors.UnsupportedCompressionTypeException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

/**
 * Not API: the one failure classification both relays (and the consumer's dead-letter forwarding) use.
 *
 * <p>{@link #classify} walks the cause chain from the outside in; the first exception whose class (or a
 * superclass of it) has a {@link Rule} decides. Wrappers without a rule ({@code ExecutionException}, a plain
 * {@code KafkaException} around a cause, our own wrappers) are looked through. Nothing known anywhere in the
 * chain: {@link PublishFailure#RETRIABLE}, because a retry never loses an event and a guess at poison would
 * park good events during an outage the relay does not recognise. Both relays still park a row whose own record
 * keeps failing, after {@code maxAttempts} failures that {@link #isAttempt count}.
 */
public final class PublishFailures {

    /** One line of the table: exceptions of {@code type} (and its subclasses, unless they have a rule) mean {@code outcome}. */
    public record Rule(Class<? extends Throwable> type, PublishFailure outcome, String why) {
    }

    /** What a failure means, and the exception in the chain that decided it (the one to record and report). */
    public record Classified(PublishFailure outcome, Throwable cause, boolean known) {

        /** The deciding exception's class name, for {@code outbox_dead_letter.error_class}. */
        public String errorClass() {
            return cause.getClass().getName();
        }

        /** {@link PublishFailures#message} of the deciding exception. */
        public String message() {
            return PublishFailures.message(cause);
        }

        /** {@code "poison: org.apache…RecordTooLargeException: <message>"}: one line for logs and health. */
        public String describe() {
            return outcome.tag() + (known ? "" : " (unclassified)") + ": " + errorClass() + ": " + message();
        }
    }

    /** What logs and health details say for a {@link PublishFailure#FATAL} failure (tests look for it). */
    public static final String OPERATOR_HINT = "needs an operator";

    private static final int MAX_MESSAGE = 2000;
    private static final int MAX_DEPTH = 32;

    private static final List<Rule> RULES = List.of(
            // POISON: this record, as it is, is refused however often it is sent.
            new Rule(InvalidEventException.class, PublishFailure.POISON,
                    "the mapping refuses the row (illegal topic from the route, reserved or invalid header, bad JSON)"),
            new Rule(RecordTooLargeException.class, PublishFailure.POISON,
                    "larger than the producer's max.request.size or the topic's max.message.bytes"),
            new Rule(RecordBatchTooLargeException.class, PublishFailure.POISON,
                    "a batch of this record alone exceeds what the broker accepts"),
            new Rule(InvalidTopicException.class, PublishFailure.POISON,
                    "the topic name is illegal for Kafka"),
            new Rule(InvalidRecordException.class, PublishFailure.POISON,
                    "the broker refuses this record (for example its validation policy)"),
            new Rule(SerializationException.class, PublishFailure.POISON,
                    "the record cannot be serialised"),
            // RETRIABLE: the record is fine, Kafka is not (yet).
            new Rule(RetriableException.class, PublishFailure.RETRIABLE,
                    "Kafka's own retriable errors: timeouts (also a full buffer), not enough replicas, leader moves, "
                            + "unknown topic or partition (metadata not there yet), corrupt transfer, disconnects"),
            new Rule(OutOfOrderSequenceException.class, PublishFailure.RETRIABLE,
                    "the idempotent producer lost its sequence on a partition (also UnknownProducerIdException); it "
                            + "resets, and a new send goes through"),
            new Rule(InvalidProducerEpochException.class, PublishFailure.RETRIABLE,
                    "the idempotent producer bumps its epoch; a new send goes through"),
            new Rule(UnknownServerException.class, PublishFailure.RETRIABLE,
                    "the broker failed unexpectedly; nothing says it is permanent"),
            new Rule(InterruptException.class, PublishFailure.RETRIABLE,
                    "the relay's thread was interrupted (it is stopping); the record may not have been sent"),
            // FATAL: needs an operator; retried so that the relay heals itself once it is fixed.
            new Rule(AuthenticationException.class, PublishFailure.FATAL,
                    "SASL or SSL authentication failed: credentials or certificates"),
            new Rule(AuthorizationException.class, PublishFailure.FATAL,
                    "an ACL is missing (Topic WRITE, Cluster IDEMPOTENT_WRITE on old brokers)"),
            new Rule(UnsupportedVersionException.class, PublishFailure.FATAL,
                    "the broker is too old for what the producer needs (idempotence, a header, a record format)"),
            new Rule(UnsupportedCompressionTypeException.class, PublishFailure.FATAL,
                    "the broker or topic does not support the configured compression.type"),
            new Rule(InvalidConfigurationException.class, PublishFailure.FATAL,
                    "the broker refuses the producer's or the topic's configuration (required acks, message format)"),
            new Rule(InvalidTimestampException.class, PublishFailure.FATAL,
                    "the relays let the producer stamp records, so this is the producer host's clock against the "
                            + "topic's timestamp window, not the event"),
            new Rule(ProducerFencedException.class, PublishFailure.FATAL,
                    "another producer with the same transactional.id; the relays never set one, so a producer "
                            + "configuration outside outboxkit's control"),
            new Rule(ConfigException.class, PublishFailure.FATAL,
                    "the Kafka client configuration is invalid"),
            // FENCED: our lease is gone.
            new Rule(FencedException.class, PublishFailure.FENCED,
                    "this instance lost its lease to a newer holder"));

    private static final Map<Class<?>, Rule> BY_TYPE;

    static {
        Map<Class<?>, Rule> m = new LinkedHashMap<>();
        for (Rule r : RULES) {
            if (m.put(r.type(), r) != null) {
                throw new ExceptionInInitializerError("two rules for " + r.type());
            }
        }
        BY_TYPE = Collections.unmodifiableMap(m);
    }

    private PublishFailures() {
    }

    /**
     * Whether {@code error} counts as one of the record's attempts towards {@code maxAttempts} (both relays): a
     * RETRIABLE failure that Kafka reported about this record itself. Never a timeout (Kafka slow or away: an outage
     * produces those), never an interrupt (the relay is stopping), never a failure that only follows from the
     * producer being stopped by another record's ({@code consequenceOfStop}), and never POISON (parked at once) or
     * FATAL (the record is fine; an operator must act). A retriable error that does reach the relay (the producer
     * retries the transient ones itself until its delivery timeout) is the broker answering about this record, so
     * the same record failing this way {@code maxAttempts} times is parked rather than holding everything behind it.
     */
    public static boolean isAttempt(Throwable error, Predicate<Throwable> consequenceOfStop) {
        if (error == null || consequenceOfStop.test(error)) {
            return false;
        }
        Classified c = classify(error);
        return c.outcome() == PublishFailure.RETRIABLE && !(c.cause() instanceof TimeoutException)
                && !(c.cause() instanceof InterruptException) && !(c.cause() instanceof InterruptedException);
    }

    /** The rules, in the order the README lists them. */
    public static List<Rule> rules() {
        return RULES;
    }

    /** The outcome of {@code error} (see the class comment). */
    public static PublishFailure outcome(Throwable error) {
        return classify(error).outcome();
    }

    /** The outcome of {@code error} and the exception in its cause chain that decided it. */
    public static Classified classify(Throwable error) {
        if (error == null) {
            throw new IllegalArgumentException("error is null: only a failure can be classified");
        }
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        int depth = 0;
        for (Throwable t = error; t != null && depth < MAX_DEPTH && seen.add(t); t = t.getCause(), depth++) {
            Rule r = rule(t.getClass());
            if (r != null) {
                return new Classified(r.outcome(), t, true);
            }
        }
        // Unknown: report what the future or a completion stage carried, not the wrapper.
        Throwable reported = error;
        while ((reported instanceof ExecutionException || reported instanceof CompletionException)
                && reported.getCause() != null && reported.getCause() != reported) {
            reported = reported.getCause();
        }
        return new Classified(PublishFailure.RETRIABLE, reported, false);
    }

    private static Rule rule(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            Rule r = BY_TYPE.get(c);
            if (r != null) {
                return r;
            }
        }
        return null;
    }

    /**
     * The reason for logs, health and {@code outbox_dead_letter.error_message}: one line, at most 2000
     * characters, the exception's own message (or its simple class name). Never a payload: the relays put
     * none into exception messages, and this never reads the record.
     */
    public static String message(Throwable error) {
        String m = error.getMessage();
        if (m == null || m.isBlank()) {
            m = error.getClass().getSimpleName();
        }
        m = m.replaceAll("\\s*[\\r\\n]+\\s*", " ").strip();
        return m.length() > MAX_MESSAGE ? m.substring(0, MAX_MESSAGE) + "…" : m;
    }
}
