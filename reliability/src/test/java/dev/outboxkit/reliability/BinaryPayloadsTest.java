package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.consumer.InboxEvent;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import dev.outboxkit.writer.WriteMode;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Binary payloads end to end with real serialisers: the writer is given a Protobuf message
 * ({@link DynamicMessage} from a descriptor built here: no code generation) and Confluent-framed Avro
 * (magic byte 0, 4-byte schema id, Avro binary of a {@link GenericRecord}), next to a JSON event; a
 * relay publishes them from real PostgreSQL to real Kafka; a {@link DedupeConsumer} handler decodes them
 * from {@link InboxEvent#payloadBytes()} by {@link InboxEvent#contentType()}. Every relay path: the
 * polling relay, the CDC relay from the table, the CDC relay from the writer's logical decoding messages.
 */
@ExtendWith(OutboxTestkitExtension.class)
class BinaryPayloadsTest {

    static final String PROTOBUF = "application/x-protobuf; messageType=shop.OrderPlaced";
    static final String AVRO = "application/vnd.confluent.avro";
    static final int AVRO_SCHEMA_ID = 42;
    static final Descriptor ORDER_PLACED = orderPlaced();
    static final Schema PAYMENT = new Schema.Parser().parse("""
            {"type": "record", "name": "Payment", "namespace": "shop",
             "fields": [{"name": "orderId", "type": "string"}, {"name": "cents", "type": "long"},
                        {"name": "currency", "type": "string"}]}""");

    enum Path {
        POLLER(WriteMode.KEEP), WAL_TABLE(WriteMode.INSERT_AND_DELETE), WAL_MESSAGES(WriteMode.LOGICAL_MESSAGE);

        final WriteMode mode;

        Path(WriteMode mode) {
            this.mode = mode;
        }

        Relay relay(TestDatabase db, TestKafka kafka, String topic) {
            if (this == POLLER) {
                return PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                        .bootstrapServers(kafka.bootstrapServers()).route(TopicRoute.of(topic)).instanceId("binary-poll")
                        .build();
            }
            return CdcRelay.builder().jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                    .bootstrapServers(kafka.bootstrapServers()).route(TopicRoute.of(topic)).instanceId("binary-cdc")
                    .slotName("s_" + db.name()).leaseDuration(Duration.ofSeconds(10)).heartbeatInterval(Duration.ofSeconds(1))
                    .offsetFlushInterval(Duration.ofMillis(200)).deleteAfterPublish(false).build();
        }
    }

    /** What the handler decoded, per event id: "protobuf order=… total=… items=…", "avro …" or "json …". */
    private final Map<UUID, String> decoded = new ConcurrentHashMap<>();

    @ParameterizedTest
    @EnumSource(Path.class)
    void protobufAndAvroBytesArriveUnchangedAndDecode(Path path, TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("binary-" + path.name().toLowerCase());
        kafka.createTopic(topic, 3);
        OutboxWriter writer = OutboxWriter.builder().mode(path.mode).build();
        Map<UUID, String> expected = new ConcurrentHashMap<>();
        try (Relay relay = path.relay(db, kafka, topic); DedupeConsumer consumer = consumer(db, kafka, topic)) {
            relay.start();
            consumer.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            for (int i = 0; i < 20; i++) {
                List<OutboxMessage> batch = new ArrayList<>();
                String order = "o-" + i;
                DynamicMessage placed = DynamicMessage.newBuilder(ORDER_PLACED)
                        .setField(ORDER_PLACED.findFieldByName("order_id"), order)
                        .setField(ORDER_PLACED.findFieldByName("total_cents"), 1_000L * i + 7)
                        .addRepeatedField(ORDER_PLACED.findFieldByName("items"), "book-\u00e9")
                        .addRepeatedField(ORDER_PLACED.findFieldByName("items"), "pen")
                        .build();
                OutboxMessage proto = OutboxMessage.builder("order", order, "OrderPlaced")
                        .payloadBytes(placed.toByteArray(), PROTOBUF).header("traceparent",
                                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").build();
                expected.put(proto.id(), describe(placed) + sha256(placed.toByteArray()));
                batch.add(proto);

                GenericRecord payment = new GenericData.Record(PAYMENT);
                payment.put("orderId", order);
                payment.put("cents", 250L * i);
                payment.put("currency", "EUR");
                byte[] framed = confluentFramed(payment);
                OutboxMessage avro = OutboxMessage.builder("order", order, "PaymentTaken")
                        .payloadBytes(framed, AVRO).build();
                expected.put(avro.id(), describe(payment) + sha256(framed));
                batch.add(avro);

                OutboxMessage json = OutboxMessage.builder("order", order, "Noted").payloadJson("{\"n\": " + i + "}").build();
                // the value as the polling relay publishes it: the jsonb's rendering, byte for byte on every path
                expected.put(json.id(), "json {\"n\": " + i + "} contentType=null");
                batch.add(json);
                try (Connection c = db.connect()) {
                    c.setAutoCommit(false);
                    writer.write(c, batch);
                    c.commit();
                }
            }
            await().atMost(Duration.ofSeconds(90)).until(() -> decoded.size() >= expected.size());
        } finally {
            if (path != Path.POLLER) {
                db.dropReplicationSlot("s_" + db.name());
            }
        }
        assertThat(decoded).isEqualTo(expected);
    }

    private DedupeConsumer consumer(TestDatabase db, TestKafka kafka, String topic) {
        return DedupeConsumer.builder().bootstrapServers(kafka.bootstrapServers()).group("binary-" + UUID.randomUUID())
                .topics(List.of(topic)).dataSource(db.dataSource())
                .handler((connection, event) -> decoded.put(event.id(), decode(event)))
                .build();
    }

    /** What a handler does: pick the decoder by content type, decode the bytes as they arrived. */
    private static String decode(InboxEvent event) throws Exception {
        String contentType = event.contentType();
        if (PROTOBUF.equals(contentType)) {
            return describe(DynamicMessage.parseFrom(ORDER_PLACED, event.payloadBytes())) + sha256(event.payloadBytes());
        }
        if (AVRO.equals(contentType)) {
            ByteBuffer framed = ByteBuffer.wrap(event.payloadBytes());
            if (framed.get() != 0 || framed.getInt() != AVRO_SCHEMA_ID) {
                return "avro with a wrong Confluent frame";
            }
            GenericRecord record = new GenericDatumReader<GenericRecord>(PAYMENT).read(null, DecoderFactory.get()
                    .binaryDecoder(event.payloadBytes(), 5, event.payloadBytes().length - 5, null));
            return describe(record) + sha256(event.payloadBytes());
        }
        event.payloadJson(); // parses
        return "json " + event.payloadText() + " contentType=" + contentType;
    }

    /** The bytes' fingerprint: they must arrive exactly as the writer was given them. */
    private static String sha256(byte[] bytes) throws Exception {
        return " sha256=" + java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    private static String describe(DynamicMessage m) {
        return "protobuf order=" + m.getField(ORDER_PLACED.findFieldByName("order_id"))
                + " total=" + m.getField(ORDER_PLACED.findFieldByName("total_cents"))
                + " items=" + m.getField(ORDER_PLACED.findFieldByName("items"));
    }

    private static String describe(GenericRecord r) {
        return "avro " + r.get("orderId") + " " + r.get("cents") + " " + r.get("currency");
    }

    /** Confluent's wire format, built by hand: magic byte 0, the schema id (big-endian int), the Avro binary. */
    static byte[] confluentFramed(GenericRecord record) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0);
        out.write(ByteBuffer.allocate(4).putInt(AVRO_SCHEMA_ID).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(record.getSchema()).write(record, encoder);
        encoder.flush();
        return out.toByteArray();
    }

    /** message OrderPlaced { string order_id = 1; int64 total_cents = 2; repeated string items = 3; } */
    private static Descriptor orderPlaced() {
        DescriptorProto message = DescriptorProto.newBuilder().setName("OrderPlaced")
                .addField(field("order_id", 1, FieldDescriptorProto.Type.TYPE_STRING, false))
                .addField(field("total_cents", 2, FieldDescriptorProto.Type.TYPE_INT64, false))
                .addField(field("items", 3, FieldDescriptorProto.Type.TYPE_STRING, true))
                .build();
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("shop.proto").setPackage("shop")
                .setSyntax("proto3").addMessageType(message).build();
        try {
            return FileDescriptor.buildFrom(file, new FileDescriptor[0]).findMessageTypeByName("OrderPlaced");
        } catch (com.google.protobuf.Descriptors.DescriptorValidationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static FieldDescriptorProto field(String name, int number, FieldDescriptorProto.Type type, boolean repeated) {
        return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type)
                .setLabel(repeated ? FieldDescriptorProto.Label.LABEL_REPEATED : FieldDescriptorProto.Label.LABEL_OPTIONAL)
                .build();
    }
}
