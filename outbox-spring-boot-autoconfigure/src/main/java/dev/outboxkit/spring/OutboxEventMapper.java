package dev.outboxkit.spring;

import dev.outboxkit.writer.OutboxMessage;
import java.util.Objects;
import java.util.function.Function;

/**
 * Turns domain events of one type, published with {@code ApplicationEventPublisher.publishEvent},
 * into outbox events: the alternative to {@link ToOutbox} for event types you cannot or do not
 * want to annotate, or that need headers, an event id or a payload other than the event itself.
 * Declare it as a bean; for its type (and subtypes) it takes the place of a {@link ToOutbox}
 * annotation. Two mappers for one event type are refused at its first publish.
 *
 * <pre>{@code
 * @Bean
 * OutboxEventMapper<OrderPlaced> orderPlaced() {
 *     return OutboxEventMapper.of(OrderPlaced.class, e -> OutboxMessage.builder("order", e.orderId(), "OrderPlaced")
 *             .payload(new OrderPlacedV2(e.orderId(), e.total())).build());
 * }
 * }</pre>
 *
 * @param <E> the event type
 */
public interface OutboxEventMapper<E> {

    /** The events this mapper takes: this type and its subtypes. */
    Class<E> eventType();

    /** The outbox event for {@code event}; never null. */
    OutboxMessage toMessage(E event);

    /** A mapper for {@code eventType} that applies {@code mapper}. */
    static <E> OutboxEventMapper<E> of(Class<E> eventType, Function<? super E, OutboxMessage> mapper) {
        Objects.requireNonNull(eventType, "eventType");
        Objects.requireNonNull(mapper, "mapper");
        return new OutboxEventMapper<>() {
            @Override
            public Class<E> eventType() {
                return eventType;
            }

            @Override
            public OutboxMessage toMessage(E event) {
                return mapper.apply(event);
            }

            @Override
            public String toString() {
                return "OutboxEventMapper[" + eventType.getName() + "]";
            }
        };
    }
}
