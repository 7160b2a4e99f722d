package dev.outboxkit.consumer;

import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.apache.kafka.connect.storage.StringConverter;

/**
 * Not outboxkit code: what a Kafka Connect deployment of Debezium's outbox pattern does, in this JVM. Debezium
 * Embedded streams {@code outbox_event} through the stock {@code io.debezium.transforms.outbox.EventRouter}; each
 * routed record is turned into bytes by real Kafka Connect converters, configured as a worker's
 * {@code key.converter}, {@code value.converter} and {@code header.converter} would be, and sent with an idempotent
 * producer; a batch is marked processed after Kafka acknowledged all of it.
 *
 * <p>The slot's position is never advanced ({@code lsn.flush.mode=manual}), so a test can restart the engine from an
 * older copy of its offsets file: what a crash between Kafka's acknowledgement and the offset commit does.
 */
final class StockRouterPipeline implements AutoCloseable {

    /** The converter combinations users run the router with; {@code schemas} is JsonConverter's schemas.enable. */
    enum Converters {
        /** The usual outbox setup: string keys, JSON values without schemas, Connect's default header converter. */
        STRING_KEY_JSON_VALUE(Kind.STRING, Kind.JSON, Kind.SIMPLE, false),
        /** Kafka Connect's defaults for keys and values: JsonConverter with schemas (envelopes). */
        JSON_WITH_SCHEMAS(Kind.JSON, Kind.JSON, Kind.SIMPLE, true),
        /** Everything as plain strings. */
        STRINGS(Kind.STRING, Kind.STRING, Kind.STRING, false),
        /** JSON headers too, without schemas (Debezium's Json header format, schemas off): values in JSON quotes. */
        JSON_HEADERS(Kind.STRING, Kind.JSON, Kind.JSON, false),
        /** JSON values and headers with schemas (JsonConverter's and so Debezium's Json header format's default). */
        JSON_HEADERS_WITH_SCHEMAS(Kind.STRING, Kind.JSON, Kind.JSON, true);

        private enum Kind { STRING, JSON, SIMPLE }

        private final Kind key;
        private final Kind value;
        private final Kind header;
        private final boolean schemas;

        Converters(Kind key, Kind value, Kind header, boolean schemas) {
            this.key = key;
            this.value = value;
            this.header = header;
            this.schemas = schemas;
        }

        /** Whether the key arrives as the aggregate id's plain text. */
        boolean plainKeys() {
            return key == Kind.STRING;
        }

        private Map<String, String> config(String type) {
            return Map.of("schemas.enable", Boolean.toString(schemas), "converter.type", type);
        }

        Converter converter(boolean isKey) {
            Converter c = (isKey ? key : value) == Kind.JSON ? new JsonConverter() : new StringConverter();
            c.configure(config(isKey ? "key" : "value"), isKey);
            return c;
        }

        HeaderConverter headerConverter() {
            HeaderConverter c = switch (header) {
                case JSON -> new JsonConverter();
                case STRING -> new StringConverter();
                case SIMPLE -> new SimpleHeaderConverter();
            };
            c.configure(config("header"));
            return c;
        }
    }

    private final DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Converter keyConverter;
    private final Converter valueConverter;
    private final HeaderConverter headerConverter;
    private final Thread thread;
    private final CountDownLatch started = new CountDownLatch(1);
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final AtomicLong acked = new AtomicLong();

    StockRouterPipeline(TestDatabase db, TestKafka kafka, Converters converters, String slot, String topicPrefix,
                        Path offsets) {
        keyConverter = converters.converter(true);
        valueConverter = converters.converter(false);
        headerConverter = converters.headerConverter();
        producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1"),
                new ByteArraySerializer(), new ByteArraySerializer());
        engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                .using(properties(db, slot, topicPrefix, offsets))
                .using(new DebeziumEngine.ConnectorCallback() {
                    @Override
                    public void pollingStarted() {
                        started.countDown();
                    }
                })
                .using((success, message, error) -> {
                    if (!success) {
                        failure.compareAndSet(null, message + (error == null ? "" : ": " + error));
                    }
                    started.countDown();
                })
                .notifying(this::forward)
                .build();
        thread = new Thread(engine, "stock-router-" + slot);
        thread.setDaemon(true);
    }

    /** Starts streaming and returns once the connector polls. */
    StockRouterPipeline start() throws InterruptedException {
        thread.start();
        if (!started.await(2, TimeUnit.MINUTES) || failure.get() != null) {
            String why = failure.get();
            close();
            throw new IllegalStateException("the stock Debezium pipeline did not start: " + (why == null ? "timeout" : why));
        }
        return this;
    }

    private static Properties properties(TestDatabase db, String slot, String topicPrefix, Path offsets) {
        Properties p = new Properties();
        p.setProperty("name", "stock-router-" + slot);
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        p.setProperty("offset.storage.file.filename", offsets.toString());
        p.setProperty("offset.flush.interval.ms", "100");
        p.setProperty("database.hostname", db.server().host());
        p.setProperty("database.port", Integer.toString(db.server().port()));
        p.setProperty("database.user", db.user());
        p.setProperty("database.password", db.password() == null ? "" : db.password());
        p.setProperty("database.dbname", db.name());
        p.setProperty("topic.prefix", "stock");
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", slot);
        p.setProperty("publication.name", slot);
        p.setProperty("publication.autocreate.mode", "filtered");
        p.setProperty("table.include.list", "public.outbox_event");
        p.setProperty("snapshot.mode", "no_data");
        p.setProperty("lsn.flush.mode", "manual");
        p.setProperty("tombstones.on.delete", "false");
        p.setProperty("transforms", "outbox");
        p.setProperty("transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter");
        p.setProperty("transforms.outbox.table.field.event.id", "id");
        p.setProperty("transforms.outbox.table.field.event.key", "aggregate_id");
        p.setProperty("transforms.outbox.table.field.event.payload", "payload");
        // the columns outboxkit's relays put into headers, placed under the same names
        p.setProperty("transforms.outbox.table.fields.additional.placement",
                "event_type:header:eventType,aggregate_type:header:aggregateType,created_at:header:createdAt");
        p.setProperty("transforms.outbox.route.by.field", "aggregate_type");
        p.setProperty("transforms.outbox.route.topic.replacement", topicPrefix + ".${routedByValue}");
        return p;
    }

    /** The worker's part: convert as Kafka Connect does, send, wait for every ack, then mark the batch processed. */
    private void forward(List<RecordChangeEvent<SourceRecord>> events,
                         DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) throws InterruptedException {
        List<Future<RecordMetadata>> acks = new ArrayList<>(events.size());
        for (RecordChangeEvent<SourceRecord> event : events) {
            SourceRecord r = event.record();
            RecordHeaders headers = new RecordHeaders();
            for (Header h : r.headers()) {
                headers.add(h.key(), headerConverter.fromConnectHeader(r.topic(), h.key(), h.schema(), h.value()));
            }
            byte[] key = keyConverter.fromConnectData(r.topic(), headers, r.keySchema(), r.key());
            byte[] value = valueConverter.fromConnectData(r.topic(), headers, r.valueSchema(), r.value());
            acks.add(producer.send(new ProducerRecord<>(r.topic(), null, key, value, headers)));
        }
        for (Future<RecordMetadata> ack : acks) {
            try {
                ack.get();
            } catch (ExecutionException e) {
                failure.compareAndSet(null, "send failed: " + e.getCause());
                throw new IllegalStateException("send failed", e.getCause());
            }
        }
        for (RecordChangeEvent<SourceRecord> event : events) {
            committer.markProcessed(event);
        }
        committer.markBatchFinished();
        acked.addAndGet(events.size());
    }

    /** Records Kafka acknowledged in this run. */
    long acked() {
        return acked.get();
    }

    /** Why the engine stopped, or null. */
    String failure() {
        return failure.get();
    }

    @Override
    public void close() {
        try {
            engine.close();
            thread.join(TimeUnit.MINUTES.toMillis(1));
        } catch (Exception e) {
            failure.compareAndSet(null, "close: " + e);
        } finally {
            producer.close();
        }
    }
}
