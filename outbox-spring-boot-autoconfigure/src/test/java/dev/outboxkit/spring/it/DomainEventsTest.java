package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.spring.SpringOutboxWriter;
import dev.outboxkit.spring.it.Orders.Misnamed;
import dev.outboxkit.spring.it.Orders.OrderNoted;
import dev.outboxkit.spring.it.Orders.OrderPlaced;
import dev.outboxkit.spring.it.Orders.OrderRefunded;
import dev.outboxkit.spring.it.Orders.OrderShipped;
import dev.outboxkit.spring.it.Orders.OrderViewed;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.transaction.IllegalTransactionStateException;

/** Domain events published with ApplicationEventPublisher become outbox rows in the publisher's transaction. */
class DomainEventsTest extends JdbcAppTest {

    @Autowired
    Orders.Service orders;
    @Autowired
    Orders.ViewedListener viewed;
    @Autowired
    ApplicationEventPublisher events;
    @Autowired
    SpringOutboxWriter outbox;

    static String newId() {
        return "order-" + UUID.randomUUID();
    }

    List<Map<String, Object>> rows(String aggregateId) {
        return jdbc.queryForList("SELECT aggregate_type, event_type, topic, payload::text AS payload, headers::text AS headers "
                + "FROM outbox_event WHERE aggregate_id = ? ORDER BY seq", aggregateId);
    }

    @Test
    void anAnnotatedEventIsWrittenWithTheBusinessChangeInPublishOrder() {
        String id = newId();
        orders.publish(id, false, new OrderPlaced(id, 42), new OrderShipped(id), new OrderPlaced(id, 43));
        List<Map<String, Object>> rows = rows(id);
        assertThat(rows).extracting(r -> r.get("event_type")).containsExactly("OrderPlaced", "OrderShippedV1", "OrderPlaced");
        assertThat(rows).extracting(r -> r.get("aggregate_type")).containsOnly("order");
        assertThat(rows.get(0).get("payload")).isEqualTo("{\"total\": 42, \"orderId\": \"" + id + "\"}");
        assertThat(rows.get(0).get("topic")).isNull();
        assertThat(rows.get(1).get("topic")).isEqualTo("shipping.events");
        assertThat(rows.get(2).get("payload").toString()).contains("43");
        assertThat(count("SELECT count(*) FROM account WHERE id = ?", id)).isOne();
    }

    @Test
    void aRollbackWritesNothing() {
        String id = newId();
        assertThatThrownBy(() -> orders.publish(id, true, new OrderPlaced(id, 1), new OrderRefunded(id, 1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("business rule failed");
        assertThat(rows(id)).isEmpty();
        assertThat(count("SELECT count(*) FROM account WHERE id = ?", id)).isZero();
    }

    @Test
    void outsideATransactionItFailsExactlyAsTheWriterDoes() {
        String id = newId();
        Throwable fromWriter = org.assertj.core.api.Assertions.catchThrowable(() -> outbox.write(
                dev.outboxkit.writer.OutboxMessage.builder("order", id, "OrderPlaced").payloadJson("{}").build()));
        assertThatThrownBy(() -> events.publishEvent(new OrderPlaced(id, 1)))
                .isInstanceOf(IllegalTransactionStateException.class)
                .hasMessage(fromWriter.getMessage());
        assertThat(fromWriter).isInstanceOf(IllegalTransactionStateException.class);
        assertThat(rows(id)).isEmpty();
    }

    @Test
    void aMapperBeanWorksWithoutTheAnnotationAndWinsOverIt() {
        String id = newId();
        orders.publish(id, false, new OrderRefunded(id, 7), new OrderNoted(id, "gift"));
        List<Map<String, Object>> rows = rows(id);
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0)).containsEntry("aggregate_type", "order").containsEntry("event_type", "OrderRefunded")
                .containsEntry("payload", "{\"refunded\": 7}");
        assertThat(rows.get(0).get("headers").toString()).contains("\"reason\": \"mapper\"");
        assertThat(rows.get(1)).containsEntry("aggregate_type", "order-note").containsEntry("event_type", "NoteAdded");
    }

    @Test
    void anEventWithoutAnnotationOrMapperStaysAPlainSpringEvent() {
        String id = newId();
        orders.publish(id, false, new OrderViewed(id), "a string event");
        assertThat(rows(id)).isEmpty();
        assertThat(viewed.seen).containsOnlyOnce(new OrderViewed(id));
        events.publishEvent(new OrderViewed(id));   // outside a transaction too: not ours, not refused
        assertThat(viewed.seen).filteredOn(new OrderViewed(id)::equals).hasSize(2);
    }

    @Test
    void anAnnotationNamingNoPropertyFailsThePublisherWithTheFix() {
        String id = newId();
        assertThatThrownBy(() -> orders.publish(id, false, new Misnamed(id)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(Misnamed.class.getName()).hasMessageContaining("aggregateId = \"id\"")
                .hasMessageContaining("name the property that holds the aggregate id");
        assertThat(count("SELECT count(*) FROM account WHERE id = ?", id)).as("rolled back").isZero();
    }
}
