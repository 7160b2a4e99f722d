package dev.outboxkit.ops.admin;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * Which dead letters an operation applies to: {@link #all()} or {@link #ids} of particular events, narrowed by
 * aggregate type, event type, error class (or one {@link DeadLetterReason}) and parking time. Immutable; each
 * {@code with…} method returns a copy.
 * Conditions combine with AND; a null condition (the default) matches every row.
 */
public final class DeadLetterFilter {

    private static final DeadLetterFilter ALL = new DeadLetterFilter(null, null, null, null, null, null, null);

    private final List<UUID> ids;
    private final String aggregateType;
    private final String eventType;
    private final String errorClass;
    private final Instant parkedAfter;
    private final Instant parkedBefore;
    private final String messagePattern;

    private DeadLetterFilter(List<UUID> ids, String aggregateType, String eventType, String errorClass,
                             Instant parkedAfter, Instant parkedBefore, String messagePattern) {
        this.ids = ids;
        this.aggregateType = aggregateType;
        this.eventType = eventType;
        this.errorClass = errorClass;
        this.parkedAfter = parkedAfter;
        this.parkedBefore = parkedBefore;
        this.messagePattern = messagePattern;
    }

    /** Every parked row. */
    public static DeadLetterFilter all() {
        return ALL;
    }

    /**
     * The parked rows of these event ids (at least one; repeats count once).
     *
     * @throws IllegalArgumentException when {@code ids} is empty or holds null
     */
    public static DeadLetterFilter ids(Collection<UUID> ids) {
        return new DeadLetterFilter(requireIds(ids, "use DeadLetterFilter.all()"), null, null, null, null, null, null);
    }

    /** A copy of {@code ids}, which must name at least one id and hold no null; {@code otherwise} says what else to do. */
    static List<UUID> requireIds(Collection<UUID> ids, String otherwise) {
        if (ids == null || ids.isEmpty()) {
            throw new IllegalArgumentException("ids must name at least one event id (or " + otherwise + ")");
        }
        List<UUID> copy = new ArrayList<>(ids.size());
        for (UUID id : ids) {
            copy.add(Objects.requireNonNull(id, "ids must not hold null"));
        }
        return List.copyOf(copy);
    }

    /** The parked rows of these event ids. */
    public static DeadLetterFilter ids(UUID... ids) {
        return ids(List.of(ids));
    }

    /** Only rows of this aggregate type. */
    public DeadLetterFilter withAggregateType(String aggregateType) {
        return new DeadLetterFilter(ids, aggregateType, eventType, errorClass, parkedAfter, parkedBefore, messagePattern);
    }

    /** Only rows of this event type. */
    public DeadLetterFilter withEventType(String eventType) {
        return new DeadLetterFilter(ids, aggregateType, eventType, errorClass, parkedAfter, parkedBefore, messagePattern);
    }

    /**
     * Only rows parked for this error: the exception's class name, either in full
     * ({@code org.apache.kafka.common.errors.RecordTooLargeException}) or its simple name ({@code RecordTooLargeException}).
     */
    public DeadLetterFilter withErrorClass(String errorClass) {
        return new DeadLetterFilter(ids, aggregateType, eventType, errorClass, parkedAfter, parkedBefore, messagePattern);
    }

    /**
     * Only the rows of one {@link DeadLetterReason}: parked for this error class (in full or its simple name, as
     * {@link #withErrorClass}) with a message that comes to {@code messagePattern} once its variable parts are
     * replaced, by the same rule {@link OutboxAdmin#deadLetterReasons} groups with. Pass a reason's own values:
     * {@code withReason(r.errorClass(), r.messagePattern())}.
     *
     * @throws IllegalArgumentException when either is null
     */
    public DeadLetterFilter withReason(String errorClass, String messagePattern) {
        if (errorClass == null || messagePattern == null) {
            throw new IllegalArgumentException("withReason needs both the error class and the message pattern of a"
                    + " DeadLetterReason, got " + errorClass + " and " + messagePattern);
        }
        return new DeadLetterFilter(ids, aggregateType, eventType, errorClass, parkedAfter, parkedBefore, messagePattern);
    }

    /**
     * Only rows parked at or after {@code from} and before {@code until}; either may be null (open). A range with
     * {@code until} not after {@code from} matches nothing.
     */
    public DeadLetterFilter withParkedBetween(Instant from, Instant until) {
        return new DeadLetterFilter(ids, aggregateType, eventType, errorClass, from, until, messagePattern);
    }

    /** The ids named, in the given order (repeats removed); empty unless made by {@link #ids}. */
    public List<UUID> ids() {
        return ids == null ? List.of() : ids.stream().distinct().toList();
    }

    boolean byIds() {
        return ids != null;
    }

    String aggregateType() {
        return aggregateType;
    }

    String eventType() {
        return eventType;
    }

    String errorClass() {
        return errorClass;
    }

    Instant parkedAfter() {
        return parkedAfter;
    }

    Instant parkedBefore() {
        return parkedBefore;
    }

    String messagePattern() {
        return messagePattern;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(ids == null ? "all dead letters" : "dead letters " + ids());
        append(sb, "aggregateType", aggregateType);
        append(sb, "eventType", eventType);
        append(sb, "errorClass", errorClass);
        append(sb, "parkedAfter", parkedAfter);
        append(sb, "parkedBefore", parkedBefore);
        append(sb, "messagePattern", messagePattern);
        return sb.toString();
    }

    private static void append(StringBuilder sb, String name, Object value) {
        if (value != null) {
            sb.append(", ").append(name).append('=').append(value);
        }
    }
}
