package dev.outboxkit.spring;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.writer.OutboxMessage;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.List;
import java.util.function.Function;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/** How the domain events of one class become outbox events: its {@link OutboxEventMapper} or its {@link ToOutbox}. */
final class DomainEventRoute {

    private final Function<Object, OutboxMessage> toMessage;

    private DomainEventRoute(Function<Object, OutboxMessage> toMessage) {
        this.toMessage = toMessage;
    }

    OutboxMessage message(Object event) {
        return toMessage.apply(event);
    }

    /**
     * The route of {@code type}, or null when it is a plain Spring event.
     *
     * @throws IllegalStateException when two mappers take {@code type}, or its {@link ToOutbox} names no readable id
     */
    static DomainEventRoute of(Class<?> type, List<OutboxEventMapper<?>> mappers) {
        List<OutboxEventMapper<?>> matching = mappers.stream().filter(m -> m.eventType().isAssignableFrom(type)).toList();
        if (matching.size() > 1) {
            throw new IllegalStateException("outboxkit: " + matching.size() + " OutboxEventMapper beans take the event type "
                    + type.getName() + " (" + matching + "): keep one, or give each a type of its own");
        }
        if (matching.size() == 1) {
            return new DomainEventRoute(event -> mapped(matching.get(0), event));
        }
        ToOutbox annotation = AnnotationUtils.findAnnotation(type, ToOutbox.class);
        return annotation == null ? null : annotated(type, annotation);
    }

    @SuppressWarnings("unchecked")
    private static OutboxMessage mapped(OutboxEventMapper<?> mapper, Object event) {
        OutboxMessage m = ((OutboxEventMapper<Object>) mapper).toMessage(event);
        if (m == null) {
            throw new IllegalStateException("outboxkit: " + mapper + " returned null for an event of type "
                    + event.getClass().getName() + ": a mapper returns the OutboxMessage to write");
        }
        return m;
    }

    private static DomainEventRoute annotated(Class<?> type, ToOutbox a) {
        String eventType = StringUtils.hasText(a.eventType()) ? a.eventType() : type.getSimpleName();
        String topic = StringUtils.hasText(a.topic()) ? a.topic() : null;
        Function<Object, Object> id = reader(type, a.aggregateId());
        return new DomainEventRoute(event -> {
            Object value = id.apply(event);
            if (value == null) {
                throw new InvalidEventException("aggregate id of the domain event " + type.getName() + " is null: "
                        + "@ToOutbox(aggregateId = \"" + a.aggregateId() + "\") reads it from the event; set it before publishing");
            }
            return OutboxMessage.builder(a.aggregateType(), value.toString(), eventType).topic(topic).payload(event).build();
        });
    }

    /** Reads {@code name} from events of {@code type}: record component, accessor {@code name()}/{@code getName()}, or field. */
    private static Function<Object, Object> reader(Class<?> type, String name) {
        Method method = accessor(type, name);
        if (method != null) {
            ReflectionUtils.makeAccessible(method);
            return event -> ReflectionUtils.invokeMethod(method, event);
        }
        Field field = ReflectionUtils.findField(type, name);
        if (field != null && !Modifier.isStatic(field.getModifiers())) {
            ReflectionUtils.makeAccessible(field);
            return event -> ReflectionUtils.getField(field, event);
        }
        throw new IllegalStateException("outboxkit: @ToOutbox on " + type.getName() + " names aggregateId = \"" + name
                + "\", but it has no record component, accessor " + name + "() or get" + StringUtils.capitalize(name)
                + "(), or field of that name: name the property that holds the aggregate id");
    }

    private static Method accessor(Class<?> type, String name) {
        if (type.isRecord()) {
            for (RecordComponent c : type.getRecordComponents()) {
                if (c.getName().equals(name)) {
                    return c.getAccessor();
                }
            }
        }
        for (String candidate : List.of(name, "get" + StringUtils.capitalize(name))) {
            Method m = ReflectionUtils.findMethod(type, candidate);
            if (m != null && m.getReturnType() != void.class && !Modifier.isStatic(m.getModifiers())) {
                return m;
            }
        }
        return null;
    }
}
