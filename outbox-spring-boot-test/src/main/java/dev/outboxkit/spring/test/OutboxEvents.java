package dev.outboxkit.spring.test;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.TopicRoute;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The outbox events the application wrote through {@code SpringOutboxWriter} (its own writes, its
 * domain events, its {@code @Idempotent} endpoints) since the current test method began, each as the
 * row the writer wrote: the payload as PostgreSQL renders the jsonb. Events of a committed transaction
 * and of one still open (a {@code @Transactional} test's own) are here; a rolled-back transaction's
 * are dropped when it ends. A bean in a context with {@link AutoConfigureOutboxEvents}: inject it.
 *
 * <pre>{@code
 * @SpringBootTest
 * @AutoConfigureOutboxEvents
 * class PlaceOrderTest {
 *     @Autowired OutboxEvents outbox;
 *
 *     @Test
 *     void placingAnOrderPublishesOrderPlaced() {
 *         orders.place(new Order("o-1", 42));
 *         OutboxEvent placed = outbox.single("OrderPlaced");
 *         assertThat(placed.aggregateId()).isEqualTo("o-1");
 *         assertThat(outbox.payload(placed, OrderPlaced.class).total()).isEqualTo(42);
 *         outbox.awaitOnKafka(placed, Duration.ofSeconds(30));   // the in-app relay published it
 *     }
 * }
 * }</pre>
 *
 * <p>The waits check the real thing: the record on its Kafka topic, the event id in the inbox of a
 * consumer group ({@code processed_event}, as {@code SpringInbox} records it). Thread-safe.
 */
public final class OutboxEvents {

    private static final ObjectMapper JSON = JsonMapper.builder().findAndAddModules().build();
    private static final Duration POLL = Duration.ofMillis(25);

    private final List<OutboxEvent> events = new CopyOnWriteArrayList<>();
    private final JdbcTemplate jdbc;
    private final OutboxTables tables;
    private final TopicRoute route;
    private final Supplier<Map<String, Object>> kafkaConfig;

    OutboxEvents(JdbcTemplate jdbc, OutboxTables tables, TopicRoute route, Supplier<Map<String, Object>> kafkaConfig) {
        this.jdbc = jdbc;
        this.tables = tables;
        this.route = route;
        this.kafkaConfig = kafkaConfig;
    }

    /** Every recorded event, in write order. */
    public List<OutboxEvent> all() {
        return List.copyOf(events);
    }

    /** The recorded events of {@code eventType}, in write order. */
    public List<OutboxEvent> ofType(String eventType) {
        return filter(e -> e.eventType().equals(eventType));
    }

    /** The recorded events of one aggregate, in write order (their order on Kafka). */
    public List<OutboxEvent> ofAggregate(String aggregateType, String aggregateId) {
        return filter(e -> e.aggregateType().equals(aggregateType) && e.aggregateId().equals(aggregateId));
    }

    /**
     * The one recorded event of {@code eventType}.
     *
     * @throws AssertionError when there is none or more than one, listing what was recorded
     */
    public OutboxEvent single(String eventType) {
        List<OutboxEvent> found = ofType(eventType);
        if (found.size() != 1) {
            throw new AssertionError("expected one outbox event of type " + eventType + ", found " + found.size()
                    + "; recorded in this test: " + describe());
        }
        return found.get(0);
    }

    /**
     * {@code event}'s JSON payload read as {@code type} by a plain Jackson 2 mapper with the modules on the class path.
     * The writer uses the application's mapper: where its settings change the JSON (a naming strategy, say), read
     * {@link OutboxEvent#payload()} with that mapper instead.
     */
    public <T> T payload(OutboxEvent event, Class<T> type) {
        if (event.payload() == null) {
            throw new IllegalArgumentException(event + " is binary (" + event.contentType() + "): read payloadBytes()");
        }
        try {
            return JSON.readValue(event.payload(), type);
        } catch (IOException e) {
            throw new AssertionError("the payload of " + event + " does not read as " + type.getName() + ": " + e.getMessage(), e);
        }
    }

    /** Forgets what was recorded; done before each test method. */
    public void clear() {
        events.clear();
    }

    /**
     * Waits until {@code event} is on Kafka, on the topic the relay routes it to (its own, or
     * {@code outboxkit.relay.options.route}), and returns that record. Reads the topic from its
     * beginning with the application's Spring Kafka consumer settings (or {@code spring.kafka.bootstrap-servers}).
     *
     * @throws AssertionError when it is not there within {@code timeout}
     */
    public ConsumerRecord<byte[], byte[]> awaitOnKafka(OutboxEvent event, Duration timeout) {
        return KafkaWait.find(kafkaConfig.get(), route.topicFor(event), event, timeout);
    }

    /**
     * Waits until consumer group {@code group} applied {@code event}: its id is in the group's inbox
     * ({@code processed_event}), committed with the listener's effect ({@code SpringInbox.applyOnce}).
     *
     * @throws AssertionError when it is not within {@code timeout}
     */
    public void awaitApplied(String group, OutboxEvent event, Duration timeout) {
        String sql = "SELECT count(*) FROM " + tables.processedEvent() + " WHERE consumer_group = ? AND event_id = ?";
        long deadline = System.nanoTime() + timeout.toNanos();
        while (jdbc.queryForObject(sql, Long.class, group, event.id()) == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(event + " was not applied by consumer group '" + group + "' within " + timeout
                        + ": no row in " + tables.processedEvent() + ". Is the relay running (outboxkit.relay.mode), does the "
                        + "listener of that group read topic " + route.topicFor(event) + " and record through SpringInbox?");
            }
            pause();
        }
    }

    void recorded(List<OutboxEvent> written) {
        events.addAll(written);
    }

    void rolledBack(List<OutboxEvent> written) {
        events.removeAll(written);
    }

    static void pause() {
        try {
            Thread.sleep(POLL.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting", e);
        }
    }

    private List<OutboxEvent> filter(Predicate<OutboxEvent> p) {
        return events.stream().filter(p).toList();
    }

    private String describe() {
        List<OutboxEvent> all = all();
        return all.isEmpty() ? "none" : all.stream().map(e -> e.eventType() + " " + e.aggregateType() + "/" + e.aggregateId()
                + " (" + e.id() + ")").collect(Collectors.joining(", ", "[", "]"));
    }
}
