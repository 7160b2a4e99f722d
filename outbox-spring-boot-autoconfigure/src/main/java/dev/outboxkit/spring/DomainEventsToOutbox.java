package dev.outboxkit.spring;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.context.event.GenericApplicationListener;
import org.springframework.core.ResolvableType;

/**
 * Writes domain events ({@code publishEvent(Object)}) whose type has an {@link OutboxEventMapper} or
 * {@link ToOutbox} to the outbox, on the publisher's thread and so in its transaction: in publish
 * order, and failing the publisher as {@link SpringOutboxWriter} does (no transaction, invalid event,
 * database error). Other events pass by.
 */
final class DomainEventsToOutbox implements GenericApplicationListener {

    private final SpringOutboxWriter outbox;
    private final List<OutboxEventMapper<?>> mappers;
    // event class -> its route; empty for a plain Spring event
    private final ConcurrentMap<Class<?>, Optional<DomainEventRoute>> routes = new ConcurrentHashMap<>();

    DomainEventsToOutbox(SpringOutboxWriter outbox, List<OutboxEventMapper<?>> mappers) {
        this.outbox = outbox;
        this.mappers = List.copyOf(mappers);
    }

    @Override
    public boolean supportsEventType(ResolvableType eventType) {
        if (!PayloadApplicationEvent.class.isAssignableFrom(eventType.toClass())) {
            return false;
        }
        Class<?> payload = eventType.as(PayloadApplicationEvent.class).getGeneric().toClass();
        // Object: the payload type is not known here; onApplicationEvent decides by the payload itself
        return payload == Object.class || route(payload).isPresent();
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (event instanceof PayloadApplicationEvent<?> p) {
            Object payload = p.getPayload();
            route(payload.getClass()).ifPresent(r -> outbox.write(r.message(payload)));
        }
    }

    private Optional<DomainEventRoute> route(Class<?> type) {
        Optional<DomainEventRoute> known = routes.get(type);
        if (known != null) {
            return known;
        }
        // computed outside the map: a refused type throws to the publisher, every time, and is not cached
        Optional<DomainEventRoute> route = Optional.ofNullable(DomainEventRoute.of(type, mappers));
        routes.putIfAbsent(type, route);
        return route;
    }
}
