package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class TestkitTest {

    @Test
    void postgresHasLogicalDecodingAndTakesAReplicationSlot(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            ResultSet rs = s.executeQuery("SHOW wal_level");
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("logical");
            String slot = db.name() + "_slot";
            rs = s.executeQuery("SELECT slot_name FROM pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
            rs.next();
            assertThat(rs.getString(1)).isEqualTo(slot);
            rs = s.executeQuery("SELECT plugin, slot_type FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("pgoutput");
            assertThat(rs.getString(2)).isEqualTo("logical");
            s.execute("SELECT pg_drop_replication_slot('" + slot + "')");
        }
        assertThat(db.server().majorVersion()).isGreaterThanOrEqualTo(14);
    }

    @Test
    void eachTestDatabaseHasTheSchema(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            ResultSet rs = s.executeQuery("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' "
                    + "AND table_name IN ('outbox_event','outbox_dead_letter','outbox_relay_lease','idempotency_key','processed_event')");
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(5);
        }
    }

    @Test
    void kafkaRoundTrip(TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("roundtrip");
        kafka.createTopic(topic, 2);
        Map<String, Object> config = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                        ("v" + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            }
        }
        List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll(List.of(topic));
        assertThat(records).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactlyInAnyOrder("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9");
    }
}
