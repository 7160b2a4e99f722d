package dev.outboxkit.consumer;

import java.util.Objects;
import java.util.function.Function;

/**
 * What the consumer does with a <em>late arrival</em>: a new event (its id is not in
 * {@code processed_event}) whose {@code createdAt} is older than the retention window. Its id may
 * have been recorded once and purged since, so applying it could apply it twice. Late arrivals are
 * always counted ({@code outbox.consumer.late_arrivals}) and logged at WARN; then, by policy:
 * <ul>
 *   <li>{@link #routeToReviewTopic()} (the default): forwarded unchanged, with explanation
 *       headers, to {@code <topic>.review} for a person or a reconciliation job to decide; not
 *       applied, not recorded;</li>
 *   <li>{@link #routeTo(Function)}: the same to a topic of your choice;</li>
 *   <li>{@link #deadLetter()}: sent to the dead-letter topic like a poison record;</li>
 *   <li>{@link #apply()}: applied through the inbox anyway, for effects that are harmless to repeat.</li>
 * </ul>
 * Duplicates are checked first: a late record whose id is still recorded is skipped as a
 * duplicate, whatever the policy. The age comes from the {@code createdAt} header, or, when a
 * record has none (a stock Debezium router), from the timestamp inside a UUIDv7 event id; events
 * with neither are never late.
 */
public final class LateArrivalPolicy {

    /** What a policy does. */
    public enum Action { ROUTE, DEAD_LETTER, APPLY }

    private final Action action;
    private final Function<String, String> topic;

    private LateArrivalPolicy(Action action, Function<String, String> topic) {
        this.action = action;
        this.topic = topic;
    }

    /** The default: forward to {@code <source topic>.review}. */
    public static LateArrivalPolicy routeToReviewTopic() {
        return new LateArrivalPolicy(Action.ROUTE, source -> source + ".review");
    }

    /** Forward to the topic {@code topicForSource} names for the record's source topic. */
    public static LateArrivalPolicy routeTo(Function<String, String> topicForSource) {
        return new LateArrivalPolicy(Action.ROUTE, Objects.requireNonNull(topicForSource, "topicForSource"));
    }

    /** Send to the dead-letter topic, with the reason in the error headers. */
    public static LateArrivalPolicy deadLetter() {
        return new LateArrivalPolicy(Action.DEAD_LETTER, null);
    }

    /** Apply anyway (still counted and logged). Only for effects that are safe to repeat. */
    public static LateArrivalPolicy apply() {
        return new LateArrivalPolicy(Action.APPLY, null);
    }

    public Action action() {
        return action;
    }

    /** The review topic for a record read from {@code sourceTopic}; only for {@link Action#ROUTE}. */
    public String reviewTopic(String sourceTopic) {
        if (topic == null) {
            throw new IllegalStateException("policy " + action + " routes to no review topic");
        }
        return topic.apply(sourceTopic);
    }

    @Override
    public String toString() {
        return "LateArrivalPolicy[" + action + "]";
    }
}
