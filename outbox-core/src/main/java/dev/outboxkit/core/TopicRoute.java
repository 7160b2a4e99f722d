package dev.outboxkit.core;

import java.util.Objects;

/**
 * Where an event goes when its row names no topic: a template with {@code ${aggregateType}} and
 * {@code ${eventType}} placeholders. The default, {@code outbox.event.${aggregateType}}, is the
 * default of Debezium's outbox event router, so switching between the two keeps topics.
 */
public final class TopicRoute {

    public static final String DEFAULT_TEMPLATE = "outbox.event.${aggregateType}";
    private static final String AGGREGATE_TYPE = "${aggregateType}";
    private static final String EVENT_TYPE = "${eventType}";

    private final String template;
    private final boolean usesAggregateType;
    private final boolean usesEventType;

    private TopicRoute(String template) {
        this.template = template;
        this.usesAggregateType = template.contains(AGGREGATE_TYPE);
        this.usesEventType = template.contains(EVENT_TYPE);
    }

    public static TopicRoute defaultRoute() {
        return new TopicRoute(DEFAULT_TEMPLATE);
    }

    /**
     * A validated template: with its placeholders filled by "x" it must be a legal topic name,
     * so only the substituted values can make a routed topic illegal (and those are parked).
     */
    public static TopicRoute of(String template) {
        Objects.requireNonNull(template, "route template");
        String probe = template.replace(AGGREGATE_TYPE, "x").replace(EVENT_TYPE, "x");
        if (probe.contains("${")) {
            throw new IllegalArgumentException("route template '" + template + "' has an unknown placeholder; "
                    + "only ${aggregateType} and ${eventType} are supported");
        }
        String problem = Topics.problem(probe);
        if (problem != null) {
            throw new IllegalArgumentException("route template '" + template + "' cannot produce a legal topic: " + problem);
        }
        return new TopicRoute(template);
    }

    public String template() {
        return template;
    }

    /** The topic for {@code event}: its own topic when set, else the template's. Not validated. */
    public String topicFor(OutboxEvent event) {
        if (event.topic() != null) {
            return event.topic();
        }
        String topic = template;
        if (usesAggregateType) {
            topic = topic.replace(AGGREGATE_TYPE, event.aggregateType());
        }
        if (usesEventType) {
            topic = topic.replace(EVENT_TYPE, event.eventType());
        }
        return topic;
    }

    /** Routes are equal when their templates are. */
    @Override
    public boolean equals(Object o) {
        return o instanceof TopicRoute other && other.template.equals(template);
    }

    @Override
    public int hashCode() {
        return template.hashCode();
    }

    @Override
    public String toString() {
        return template;
    }
}
