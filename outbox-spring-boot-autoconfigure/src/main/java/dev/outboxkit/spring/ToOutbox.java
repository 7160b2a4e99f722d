package dev.outboxkit.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a domain event published with {@code ApplicationEventPublisher.publishEvent(event)} an
 * outbox event: written by {@link SpringOutboxWriter} in the publisher's transaction, the event
 * object as its JSON payload. Without this annotation (or an {@link OutboxEventMapper} bean) an
 * event stays a plain Spring event.
 *
 * <pre>{@code
 * @ToOutbox(aggregateType = "order", aggregateId = "orderId")
 * public record OrderPlaced(String orderId, long total) {}
 *
 * @Transactional
 * public void place(Order order) {
 *     orders.save(order);
 *     events.publishEvent(new OrderPlaced(order.id(), order.total()));  // commits with the order, or not at all
 * }
 * }</pre>
 *
 * <p>Found on the event's class, a superclass or an interface (one annotation on a sealed
 * interface covers its records). Outside a transaction the publisher gets the writer's
 * {@code IllegalTransactionStateException}; an event type whose {@link #aggregateId()} names
 * nothing readable fails at its first publish with the fix.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface ToOutbox {

    /** The aggregate type, for example {@code order}; picks the default topic {@code outbox.event.<aggregateType>}. */
    String aggregateType();

    /**
     * Where the aggregate id comes from: the name of a record component, an accessor ({@code orderId()}
     * or {@code getOrderId()}) or a field of the event. Its value's {@code toString()} is the id, and so
     * the Kafka key: one aggregate's events stay in order.
     */
    String aggregateId();

    /** The event type; default: the event class's simple name, for example {@code OrderPlaced}. */
    String eventType() default "";

    /** An explicit topic; default: the relay's route ({@code outbox.event.<aggregateType>}). */
    String topic() default "";
}
