package dev.outboxkit.relay.cdc.bench;

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.Header;
import io.debezium.engine.format.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The stock Debezium outbox pipeline, as Debezium's documentation puts it together, for the benchmark:
 * Debezium Embedded with the {@code Json} format (JSON converter), the outbox {@code EventRouter} SMT,
 * offsets in a file, and a change consumer that sends each batch to Kafka and waits for every future
 * before marking the batch processed. Not outboxkit code; written here only to be measured.
 * Arguments {@code key=value}: host, port, db, user, password, bootstrap, slot, publication.
 * Prints {@code ACKED <n> <epochMillis>} whenever the acknowledged count changed (at most every 100 ms).
 */
public final class StockPipelineMain {

    private StockPipelineMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        Path offsets = a.containsKey("offsets") ? Path.of(a.get("offsets")) : Files.createTempFile("stock-offsets", ".dat");
        Properties props = new Properties();
        props.setProperty("name", "stock-outbox");
        props.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        props.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        props.setProperty("offset.storage.file.filename", offsets.toString());
        props.setProperty("offset.flush.interval.ms", "60000");
        props.setProperty("database.hostname", a.get("host"));
        props.setProperty("database.port", a.get("port"));
        props.setProperty("database.user", a.get("user"));
        props.setProperty("database.password", a.getOrDefault("password", ""));
        props.setProperty("database.dbname", a.get("db"));
        props.setProperty("topic.prefix", "stock");
        props.setProperty("plugin.name", "pgoutput");
        props.setProperty("slot.name", a.get("slot"));
        props.setProperty("publication.name", a.get("publication"));
        props.setProperty("publication.autocreate.mode", "filtered");
        props.setProperty("table.include.list", "public.outbox_event");
        // Stream only (the slot exists before the data; a snapshot would send the rows a second time).
        props.setProperty("snapshot.mode", "no_data");
        props.setProperty("tombstones.on.delete", "false");
        props.setProperty("transforms", "outbox");
        props.setProperty("transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter");
        props.setProperty("transforms.outbox.table.field.event.id", "id");
        props.setProperty("transforms.outbox.table.field.event.key", "aggregate_id");
        props.setProperty("transforms.outbox.table.field.event.payload", "payload");
        props.setProperty("transforms.outbox.table.fields.additional.placement",
                "event_type:header:eventType,aggregate_type:header:aggregateType,created_at:header:createdAt");
        props.setProperty("transforms.outbox.route.by.field", "aggregate_type");
        props.setProperty("transforms.outbox.route.topic.replacement", a.getOrDefault("topicTemplate", "stock.event.${routedByValue}"));
        props.setProperty("key.converter.schemas.enable", "false");
        props.setProperty("value.converter.schemas.enable", "false");

        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps);
        AtomicLong acked = new AtomicLong();

        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class, Json.class, Json.class)
                .using(props)
                .notifying((List<ChangeEvent<String, String>> records,
                            DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer) -> {
                    List<Future<RecordMetadata>> futures = new ArrayList<>(records.size());
                    for (ChangeEvent<String, String> r : records) {
                        RecordHeaders headers = new RecordHeaders();
                        for (Header<String> h : r.<String>headers()) {
                            headers.add(h.getKey(), h.getValue() == null ? null : h.getValue().getBytes(StandardCharsets.UTF_8));
                        }
                        futures.add(producer.send(new ProducerRecord<>(r.destination(), null, r.key(), r.value(), headers)));
                    }
                    for (Future<RecordMetadata> f : futures) {
                        try {
                            f.get();
                        } catch (Exception e) {
                            throw new IllegalStateException("send failed", e);
                        }
                    }
                    for (ChangeEvent<String, String> r : records) {
                        committer.markProcessed(r);
                    }
                    committer.markBatchFinished();
                    acked.addAndGet(records.size());
                })
                .using((success, message, error) -> {
                    if (!success) {
                        System.out.println("ENGINE FAILED " + message);
                        if (error != null) {
                            error.printStackTrace(System.out);
                        }
                    }
                })
                .build();
        ExecutorService executor = Executors.newSingleThreadExecutor();
        executor.execute(engine);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                engine.close();
                producer.close();
            } catch (Exception e) {
                // exiting anyway
            }
        }));
        long last = -1;
        while (true) {
            long n = acked.get();
            if (n != last) {
                System.out.println("ACKED " + n + " " + System.currentTimeMillis());
                last = n;
            }
            Thread.sleep(25);
        }
    }
}
