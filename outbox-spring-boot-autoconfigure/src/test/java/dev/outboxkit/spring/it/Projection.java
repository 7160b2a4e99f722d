package dev.outboxkit.spring.it;

import dev.outboxkit.spring.SpringInbox;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.context.annotation.Profile;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The downstream service: a projection of transfers fed by a @KafkaListener through the inbox. */
@Component
@Profile("relay")
class Projection {

    static final String TOPIC = "outbox.event.transfer";
    /** Fed to the batch listener; a record keyed {@code fail-…} fails its effect every time. */
    static final String BATCH_TOPIC = "outbox.event.transfer-batch";

    private final SpringInbox inbox;
    private final JdbcTemplate jdbc;
    /** Transfers whose first delivery fails after the effect, inside the transaction. */
    private final Set<String> failOnce = ConcurrentHashMap.newKeySet();
    /** Records (by key) whose every delivery fails. */
    private final Set<String> failAlways = ConcurrentHashMap.newKeySet();
    private final AtomicInteger deliveries = new AtomicInteger();
    private final AtomicInteger skipped = new AtomicInteger();
    /** The keys of each batch the batch listener received, in order. */
    private final List<List<String>> batches = new java.util.concurrent.CopyOnWriteArrayList<>();

    Projection(SpringInbox inbox, JdbcTemplate jdbc) {
        this.inbox = inbox;
        this.jdbc = jdbc;
    }

    // Accessors, not fields: the bean is a transactional proxy.
    public void failFirstDeliveryOf(String transferId) {
        failOnce.add(transferId);
    }

    public void failEveryDeliveryOf(String key) {
        failAlways.add(key);
    }

    public int pendingFailures() {
        return failOnce.size();
    }

    public int deliveries() {
        return deliveries.get();
    }

    public int skipped() {
        return skipped.get();
    }

    public List<List<String>> batches() {
        return List.copyOf(batches);
    }

    @KafkaListener(id = "projection", topics = TOPIC, groupId = "projection")
    @Transactional
    public void on(ConsumerRecord<String, String> record) {
        deliveries.incrementAndGet();
        // The inbox has checked the id header before the effect runs.
        boolean applied = inbox.applyOnce(record, c -> jdbc.update(
                "INSERT INTO projection_log (event_id, transfer_id, amount) VALUES (?::uuid, ?, 1)",
                new String(record.headers().lastHeader("id").value(), StandardCharsets.UTF_8), record.key()));
        if (!applied) {
            skipped.incrementAndGet();
        }
        if (failAlways.contains(record.key())) {
            throw new IllegalStateException("injected failure of every delivery of " + record.key());
        }
        if (failOnce.remove(record.key())) {
            throw new IllegalStateException("injected failure after the effect, before the listener's transaction commits");
        }
    }

    /** A batch listener as Spring Kafka users write it: each record once, the batch in one transaction. */
    @KafkaListener(id = "projection-batch", topics = BATCH_TOPIC, groupId = "projection-batch", batch = "true")
    public void onBatch(List<ConsumerRecord<String, String>> records) {
        batches.add(records.stream().map(ConsumerRecord::key).toList());
        inbox.applyEachOnce(records, r -> {
            if (r.key().startsWith("fail-")) {
                throw new IllegalStateException("injected failure of every delivery of " + r.key());
            }
            jdbc.update("INSERT INTO projection_log (event_id, transfer_id, amount) VALUES (?::uuid, ?, 1)",
                    new String(r.headers().lastHeader("id").value(), StandardCharsets.UTF_8), r.key());
        });
    }
}
