package dev.outboxkit.core;

import dev.outboxkit.core.spi.Checks;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;

/**
 * Where an event goes when its row names no topic: a template with {@code ${aggregateType}} and
 * {@code ${eventType}} placeholders. The default, {@code outbox.event.${aggregateType}}, is the
 * default of Debezium's outbox event router, so switching between the two keeps topics.
 *
 * <p>A route also says how its records are laid out ({@link #format()}): outboxkit's headers, or CloudEvents
 * ({@link #withCloudEvents}) with a {@code ce_source} template that takes the same placeholders. The format applies
 * to every record the relay publishes, rows with a topic of their own included.
 */
public final class TopicRoute {

    public static final String DEFAULT_TEMPLATE = "outbox.event.${aggregateType}";
    /** The default {@code ce_source} template of {@link RecordFormat#CLOUDEVENTS} records. */
    public static final String DEFAULT_CLOUD_EVENTS_SOURCE = "/outbox/${aggregateType}";
    private static final String AGGREGATE_TYPE = "${aggregateType}";
    private static final String EVENT_TYPE = "${eventType}";

    private final String template;
    private final boolean usesAggregateType;
    private final boolean usesEventType;
    private final RecordFormat format;
    /** The ce_source template; null for {@link RecordFormat#OUTBOXKIT}. */
    private final String source;

    private TopicRoute(String template, RecordFormat format, String source) {
        this.template = template;
        this.usesAggregateType = template.contains(AGGREGATE_TYPE);
        this.usesEventType = template.contains(EVENT_TYPE);
        this.format = format;
        this.source = source;
    }

    public static TopicRoute defaultRoute() {
        return new TopicRoute(DEFAULT_TEMPLATE, RecordFormat.OUTBOXKIT, null);
    }

    /**
     * A validated template: with its placeholders filled by "x" it must be a legal topic name,
     * so only the substituted values can make a routed topic illegal (and those are parked).
     */
    public static TopicRoute of(String template) {
        Objects.requireNonNull(template, "route template");
        String problem = Topics.problem(probe("route template", template));
        if (problem != null) {
            throw new IllegalArgumentException("route template '" + template + "' cannot produce a legal topic: " + problem);
        }
        return new TopicRoute(template, RecordFormat.OUTBOXKIT, null);
    }

    /**
     * This route with {@link RecordFormat#CLOUDEVENTS} records whose {@code ce_source} is {@code sourceTemplate}
     * with {@code ${aggregateType}} and {@code ${eventType}} filled in, for example
     * {@code https://orders.example.com/${aggregateType}} or {@code /orders}.
     *
     * @throws IllegalArgumentException when the template, its placeholders filled by "x", is not a non-empty
     *                                  URI reference (RFC 3986), as CloudEvents requires of {@code source}
     */
    public TopicRoute withCloudEvents(String sourceTemplate) {
        return new TopicRoute(template, RecordFormat.CLOUDEVENTS, checkSource(sourceTemplate));
    }

    /** This route with outboxkit's own headers ({@link RecordFormat#OUTBOXKIT}). */
    public TopicRoute withOutboxkitHeaders() {
        return new TopicRoute(template, RecordFormat.OUTBOXKIT, null);
    }

    /**
     * Returns {@code sourceTemplate} when it is usable as a {@code ce_source} template.
     *
     * @throws IllegalArgumentException saying why not
     */
    public static String checkSource(String sourceTemplate) {
        Objects.requireNonNull(sourceTemplate, "CloudEvents source template");
        String probe = probe("CloudEvents source template", sourceTemplate);
        String problem = Checks.uriProblem(probe);
        if (problem != null) {
            throw new IllegalArgumentException("CloudEvents source template '" + sourceTemplate + "' is not a URI "
                    + "reference: " + problem + " (for example /orders or https://orders.example.com/${aggregateType})");
        }
        return sourceTemplate;
    }

    private static String probe(String what, String template) {
        String probe = template.replace(AGGREGATE_TYPE, "x").replace(EVENT_TYPE, "x");
        if (probe.contains("${")) {
            throw new IllegalArgumentException(what + " '" + template + "' has an unknown placeholder; "
                    + "only ${aggregateType} and ${eventType} are supported");
        }
        return probe;
    }


    public String template() {
        return template;
    }

    /** How records of this route are laid out. */
    public RecordFormat format() {
        return format;
    }

    /** The {@code ce_source} template, or null unless {@link #format()} is {@link RecordFormat#CLOUDEVENTS}. */
    public String cloudEventsSource() {
        return source;
    }

    /** The topic for {@code event}: its own topic when set, else the template's. Not validated. */
    public String topicFor(OutboxEvent event) {
        if (event.topic() != null) {
            return event.topic();
        }
        return fill(template, usesAggregateType, usesEventType, event);
    }

    /** The {@code ce_source} of {@code event}; null for {@link RecordFormat#OUTBOXKIT}. Not validated. */
    public String sourceFor(OutboxEvent event) {
        return source == null ? null : fill(source, source.contains(AGGREGATE_TYPE), source.contains(EVENT_TYPE), event);
    }

    private static String fill(String template, boolean aggregateType, boolean eventType, OutboxEvent event) {
        String out = template;
        if (aggregateType) {
            out = out.replace(AGGREGATE_TYPE, event.aggregateType());
        }
        if (eventType) {
            out = out.replace(EVENT_TYPE, event.eventType());
        }
        return out;
    }

    /** Routes are equal when their templates and record formats are. */
    @Override
    public boolean equals(Object o) {
        return o instanceof TopicRoute other && other.template.equals(template) && other.format == format
                && Objects.equals(other.source, source);
    }

    @Override
    public int hashCode() {
        return Objects.hash(template, format, source);
    }

    @Override
    public String toString() {
        return source == null ? template : template + " (CloudEvents, source " + source + ")";
    }
}
