package dev.outboxkit.testkit;

import dev.outboxkit.core.HeaderNames;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What a failover cost, measured from Kafka: after the relay instance that held some work was stopped (SIGKILL or
 * SIGTERM), how long until a survivor published a record of that work, and the worst delay (the record's Kafka
 * timestamp − the event's {@code createdAt}) of the events created around the stop. Shared by the {@code failover}
 * benchmark scenario and {@code outbox demo}; times are wall-clock milliseconds of this machine (the Kafka
 * timestamp is the producer's send time, on the same clock when the relay runs on the same machine).
 */
public final class FailoverGap {

    /** Events created this long before the signal count towards its worst delay (the batch in flight). */
    public static final long BEFORE_SIGNAL_MS = 1_000;

    /** One record of the topic: event id and aggregate (the key), Kafka timestamp (ms), the event's createdAt. */
    public record Published(UUID id, String aggregate, long timestamp, Instant createdAt) {
    }

    /**
     * One stop: {@code signalMs} when the signal was sent; {@code goneMs} from when on every record is a survivor's
     * (for SIGKILL the signal itself: a record's timestamp is taken when it is sent, and a killed process sends
     * nothing more; for SIGTERM the process's exit, since it finishes its batch first); {@code work} the aggregates
     * whose events the stopped instance published.
     */
    public record Stop(long signalMs, long goneMs, Set<String> work) {
    }

    /**
     * The figures of one stop: signal → the survivor's first record of the stopped instance's work, and the worst
     * delay of the events created from {@link #BEFORE_SIGNAL_MS} before the signal until that record.
     */
    public record Gap(long firstRecordMs, long worstDelayMs) {
    }

    private FailoverGap() {
    }

    /** The Kafka timestamp of the first record of {@code stop}'s work published after it exited, or -1 if none yet. */
    public static long firstRecordAfter(List<Published> records, Stop stop) {
        long first = -1;
        for (Published p : records) {
            if (p.timestamp() > stop.goneMs() && stop.work().contains(p.aggregate())
                    && (first < 0 || p.timestamp() < first)) {
                first = p.timestamp();
            }
        }
        return first;
    }

    /** The gap of {@code stop}, from every record of the topic (read after the survivor published its work). */
    public static Gap measure(List<Published> records, Stop stop) {
        long first = firstRecordAfter(records, stop);
        if (first < 0) {
            throw new IllegalStateException("no record of the stopped instance's work was published after it exited"
                    + " (at " + Instant.ofEpochMilli(stop.goneMs()) + "): no survivor took it over");
        }
        Map<UUID, Published> firsts = new HashMap<>();
        for (Published p : records) {
            if (p.id() != null) {
                firsts.merge(p.id(), p, (a, b) -> a.timestamp() <= b.timestamp() ? a : b);
            }
        }
        long worst = 0;
        for (Published p : firsts.values()) {
            if (p.createdAt() == null) {
                continue;
            }
            long created = p.createdAt().toEpochMilli();
            if (created >= stop.signalMs() - BEFORE_SIGNAL_MS && created <= first) {
                worst = Math.max(worst, p.timestamp() - created);
            }
        }
        return new Gap(first - stop.signalMs(), worst);
    }

    /**
     * The aggregates, among {@code candidates} of {@code aggregateType}, whose events the polling relay instance
     * {@code holder} publishes now: those of the partitions it holds leases on ({@code poll/<n>} in
     * {@code outbox_relay_lease}; an aggregate's partition is the relay's own hash of type and id modulo the
     * instance's partition count in {@code outbox_relay_member}). {@code c}'s search path must reach the schema.
     */
    public static Set<String> heldByPoller(Connection c, String holder, String aggregateType,
                                           Collection<String> candidates) throws SQLException {
        Set<String> held = new HashSet<>();
        try (PreparedStatement s = c.prepareStatement(
                "SELECT a FROM unnest(?::text[]) a JOIN outbox_relay_member m ON m.member_id = ?"
                        + " JOIN outbox_relay_lease l ON l.holder = m.member_id AND l.lease_key = 'poll/'"
                        + " || ((hashtext(? || '/' || a) & 2147483647) % m.partitions)")) {
            s.setArray(1, c.createArrayOf("text", candidates.toArray()));
            s.setString(2, holder);
            s.setString(3, aggregateType);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    held.add(rs.getString(1));
                }
            }
        }
        return held;
    }

    /** Every record {@code topic} holds now, read from its start (one consumer, assigned, no group). */
    public static List<Published> readTopic(String bootstrap, String topic) {
        List<Published> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000"))) {
            List<TopicPartition> partitions = new ArrayList<>();
            consumer.partitionsFor(topic, Duration.ofSeconds(30))
                    .forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(published(r));
                }
            }
        }
        return out;
    }

    /** One record as {@link Published}: the {@code id} and {@code createdAt} headers (null when absent) and key. */
    public static Published published(ConsumerRecord<byte[], byte[]> r) {
        Header id = r.headers().lastHeader(HeaderNames.ID);
        Header createdAt = r.headers().lastHeader(HeaderNames.CREATED_AT);
        return new Published(id == null ? null : UUID.fromString(new String(id.value(), StandardCharsets.UTF_8)),
                r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8), r.timestamp(),
                createdAt == null ? null : Instant.parse(new String(createdAt.value(), StandardCharsets.UTF_8)));
    }
}
