package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The test projection every end-to-end test uses: events carry {"amount": n} for an account
 * (the aggregate); the handler adds the amount to {@code account.balance} and appends the event
 * to {@code effect_log} (no unique constraint there, so a duplicate effect shows up as a second
 * row). The history checker reads {@code effect_log} back in application order.
 */
final class Projection {

    static final KafkaRecords RECORDS = new KafkaRecords(TopicRoute.defaultRoute());

    private Projection() {
    }

    /** One produced event and its place in its account's order. */
    record Sent(OutboxEvent event, long amount, long order) {
    }

    /** A topic with events already on it, for one test. */
    record Scenario(String topic, List<Sent> events) {
    }

    /** The projection tables, a new topic, and {@code count} events for {@code accounts} accounts sent to it. */
    static Scenario scenario(TestDatabase db, TestKafka kafka, String prefix, int partitions, int count, int accounts)
            throws SQLException {
        create(db);
        String topic = TestKafka.uniqueTopic(prefix);
        kafka.createTopic(topic, partitions);
        List<Sent> events = events(topic, count, accounts);
        send(kafka, events);
        return new Scenario(topic, events);
    }

    static void create(TestDatabase db) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE account (id text PRIMARY KEY, balance bigint NOT NULL)");
            s.execute("CREATE TABLE effect_log (seq bigserial PRIMARY KEY, event_id uuid NOT NULL, aggregate text NOT NULL)");
        }
    }

    /** Events for {@code accounts} accounts, round robin, amounts 1..n, each account's order numbered. */
    static List<Sent> events(String topic, int count, int accounts) {
        List<Sent> out = new ArrayList<>(count);
        Map<String, Long> order = new HashMap<>();
        Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
        for (int i = 0; i < count; i++) {
            String account = "acct-" + (i % accounts);
            long amount = i + 1;
            OutboxEvent e = new OutboxEvent(EventIds.next(), "account", account, "deposited", topic,
                    "{\"amount\":" + amount + "}", Map.of("traceparent", "00-" + i), now);
            out.add(new Sent(e, amount, order.merge(account, 1L, Long::sum)));
        }
        return out;
    }

    /** A raw-bytes producer like a relay's: acks=all, short linger. */
    static Map<String, Object> producerConfig(TestKafka kafka) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return p;
    }

    static KafkaProducer<byte[], byte[]> producer(TestKafka kafka) {
        return new KafkaProducer<>(producerConfig(kafka));
    }

    /** Sends the events as a relay would (KafkaRecords), and waits for every ack. */
    static void send(TestKafka kafka, List<Sent> events) {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (Sent s : events) {
            records.add(RECORDS.toRecord(s.event()));
        }
        sendRaw(kafka, records);
    }

    static void sendRaw(TestKafka kafka, List<ProducerRecord<byte[], byte[]>> records) {
        try (KafkaProducer<byte[], byte[]> producer = producer(kafka)) {
            var acks = new ArrayList<java.util.concurrent.Future<?>>();
            for (ProducerRecord<byte[], byte[]> r : records) {
                acks.add(producer.send(r));
            }
            for (var ack : acks) {
                ack.get(60, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot produce test records: " + e, e);
        }
    }

    /** The projection's handler, as one JDBC batch per poll. */
    static BatchHandler batchHandler() {
        return (c, events) -> {
            try (PreparedStatement up = c.prepareStatement("INSERT INTO account (id, balance) VALUES (?, ?) "
                    + "ON CONFLICT (id) DO UPDATE SET balance = account.balance + excluded.balance");
                 PreparedStatement log = c.prepareStatement("INSERT INTO effect_log (event_id, aggregate) VALUES (?, ?)")) {
                for (InboxEvent e : events) {
                    up.setString(1, e.aggregateId());
                    up.setLong(2, e.payloadJson().get("amount").asLong());
                    up.addBatch();
                    log.setObject(1, e.id());
                    log.setString(2, e.aggregateId());
                    log.addBatch();
                }
                up.executeBatch();
                log.executeBatch();
            }
        };
    }

    /** The same projection, one event at a time. */
    static EventHandler handler() {
        BatchHandler batch = batchHandler();
        return (c, e) -> batch.handle(c, List.of(e));
    }

    static long total(TestDatabase db) throws SQLException {
        return db.count("SELECT coalesce(sum(balance), 0) FROM account");
    }

    /** Balances the projection must end with: each distinct event once. */
    static Map<String, Long> expectedBalances(List<Sent> events) {
        Map<String, Long> out = new HashMap<>();
        Map<UUID, Boolean> seen = new HashMap<>();
        for (Sent s : events) {
            if (seen.put(s.event().id(), true) == null) {
                out.merge(s.event().aggregateId(), s.amount(), Long::sum);
            }
        }
        return out;
    }

    static Map<String, Long> balances(TestDatabase db) throws SQLException {
        Map<String, Long> out = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, balance FROM account")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getLong(2));
            }
        }
        return out;
    }

    /**
     * The history of a run: intents are the distinct events produced, deliveries what the topic
     * holds (duplicates included), applications the effect log in application order.
     */
    static History history(List<Sent> intents, List<ConsumerRecord<byte[], byte[]>> delivered, TestDatabase db)
            throws SQLException {
        History h = new History();
        Map<UUID, Sent> byId = new LinkedHashMap<>();
        intents.forEach(s -> byId.putIfAbsent(s.event().id(), s));
        byId.values().forEach(s -> h.committed(s.event().id(), s.event().aggregateId(), s.order()));
        for (ConsumerRecord<byte[], byte[]> r : delivered) {
            Header id = r.headers().lastHeader("id");
            if (id != null) {
                try {
                    h.delivered(UUID.fromString(new String(id.value(), StandardCharsets.UTF_8)));
                } catch (IllegalArgumentException notAnId) {
                    // poison records are not deliveries of an intent
                }
            }
        }
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT event_id, aggregate FROM effect_log ORDER BY seq")) {
            while (rs.next()) {
                h.applied(rs.getObject(1, UUID.class), rs.getString(2));
            }
        }
        return h;
    }

    /** Sum check and history check together. */
    static void assertExactlyOnce(List<Sent> intents, List<ConsumerRecord<byte[], byte[]>> delivered, TestDatabase db)
            throws SQLException {
        History.Report report = history(intents, delivered, db).check();
        assertThat(report.ok()).as(report.summary()).isTrue();
        assertThat(report.applied()).as(report.summary()).isEqualTo(report.intents());
        assertThat(balances(db)).isEqualTo(expectedBalances(intents));
        long expectedTotal = expectedBalances(intents).values().stream().mapToLong(Long::longValue).sum();
        assertThat(total(db)).isEqualTo(expectedTotal);
    }
}
