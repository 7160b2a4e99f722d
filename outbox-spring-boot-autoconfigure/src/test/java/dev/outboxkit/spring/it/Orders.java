package dev.outboxkit.spring.it;

import dev.outboxkit.spring.OutboxEventMapper;
import dev.outboxkit.spring.ToOutbox;
import dev.outboxkit.writer.OutboxMessage;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/** A service that publishes domain events with ApplicationEventPublisher, as a Spring Modulith user writes it. */
@Configuration(proxyBeanMethods = false)
@Profile("jdbc")
class Orders {

    @ToOutbox(aggregateType = "order", aggregateId = "orderId")
    record OrderPlaced(String orderId, long total) {}

    /** Id from a getter, own event type and topic. */
    @ToOutbox(aggregateType = "order", aggregateId = "orderId", eventType = "OrderShippedV1", topic = "shipping.events")
    static final class OrderShipped {
        private final String orderId;

        OrderShipped(String orderId) {
            this.orderId = orderId;
        }

        public String getOrderId() {
            return orderId;
        }
    }

    /** No annotation: its mapper bean makes it an outbox event. */
    record OrderRefunded(String orderId, long amount) {}

    /** Annotated and mapped: the mapper wins. */
    @ToOutbox(aggregateType = "order", aggregateId = "orderId")
    record OrderNoted(String orderId, String note) {}

    /** A plain Spring event. */
    record OrderViewed(String orderId) {}

    /** Names an id it does not have. */
    @ToOutbox(aggregateType = "order", aggregateId = "id")
    record Misnamed(String orderId) {}

    @Bean
    OutboxEventMapper<OrderRefunded> orderRefunded() {
        return OutboxEventMapper.of(OrderRefunded.class, e -> OutboxMessage.builder("order", e.orderId(), "OrderRefunded")
                .payloadJson("{\"refunded\":" + e.amount() + "}").header("reason", "mapper").build());
    }

    @Bean
    OutboxEventMapper<OrderNoted> orderNoted() {
        return OutboxEventMapper.of(OrderNoted.class, e -> OutboxMessage.builder("order-note", e.orderId(), "NoteAdded")
                .payload(e).build());
    }

    @Bean
    Service orderService(JdbcTemplate jdbc, ApplicationEventPublisher events) {
        return new Service(jdbc, events);
    }

    @Bean
    ViewedListener viewedListener() {
        return new ViewedListener();
    }

    static class Service {
        private final JdbcTemplate jdbc;
        private final ApplicationEventPublisher events;

        Service(JdbcTemplate jdbc, ApplicationEventPublisher events) {
            this.jdbc = jdbc;
            this.events = events;
        }

        /** The business change and its events in one transaction; {@code fail} rolls both back. */
        @Transactional
        public void publish(String account, boolean fail, Object... domainEvents) {
            jdbc.update("INSERT INTO account VALUES (?, 0)", account);
            for (Object e : domainEvents) {
                events.publishEvent(e);
            }
            if (fail) {
                throw new IllegalStateException("business rule failed after the events were published");
            }
        }
    }

    static class ViewedListener {
        final List<OrderViewed> seen = new CopyOnWriteArrayList<>();

        @EventListener
        void on(OrderViewed e) {
            seen.add(e);
        }
    }
}
