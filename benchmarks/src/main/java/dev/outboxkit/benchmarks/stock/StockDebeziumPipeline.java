package dev.outboxkit.benchmarks.stock;

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.Header;
import io.debezium.engine.format.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The stock Debezium outbox pipeline, as Debezium's documentation puts it together, to be measured
 * next to outboxkit's relays ({@code stock_debezium_eps}): Debezium Embedded with the {@code Json}
 * format (JSON converter, schemas off), the outbox {@code EventRouter} SMT, offsets in a file, and a
 * change consumer that sends each batch to Kafka and waits for every future before marking the batch
 * processed. Not outboxkit code. It streams from a slot and publication that exist before the data
 * ({@code snapshot.mode=no_data}), in this JVM; {@link #acked()} counts acknowledged events.
 */
public final class StockDebeziumPipeline implements AutoCloseable {

    /**
     * Where to stream from and to.
     *
     * @param topicTemplate EventRouter's {@code route.topic.replacement}, e.g. {@code stock.${routedByValue}}
     */
    public record Settings(String host, int port, String database, String user, String password, String bootstrap,
                           String slot, String publication, String topicTemplate, Path offsets) {
    }

    private final DebeziumEngine<ChangeEvent<String, String>> engine;
    private final KafkaProducer<String, String> producer;
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "stock-debezium"));
    private final AtomicLong acked = new AtomicLong();
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final CountDownLatch taskStarted = new CountDownLatch(1);

    private StockDebeziumPipeline(Settings s) {
        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrap());
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        producer = new KafkaProducer<>(producerProps);
        engine = DebeziumEngine.create(Json.class, Json.class, Json.class)
                .using(engineProperties(s))
                .notifying(this::sendAndWait)
                .using(new DebeziumEngine.ConnectorCallback() {
                    @Override
                    public void taskStarted() {
                        taskStarted.countDown();
                    }
                })
                .using((success, message, error) -> {
                    if (!success) {
                        failure.compareAndSet(null, message + (error == null ? "" : ": " + error));
                    }
                    taskStarted.countDown();
                })
                .build();
    }

    /** Starts the engine and returns once its task runs (or throws when it failed or took over 2 minutes). */
    public static StockDebeziumPipeline start(Settings settings) throws InterruptedException {
        StockDebeziumPipeline pipeline = new StockDebeziumPipeline(settings);
        pipeline.executor.execute(pipeline.engine);
        if (!pipeline.taskStarted.await(2, TimeUnit.MINUTES) || pipeline.failure.get() != null) {
            String why = pipeline.failure.get();
            pipeline.close();
            throw new IllegalStateException("stock Debezium pipeline did not start: " + (why == null ? "timeout" : why));
        }
        return pipeline;
    }

    private static Properties engineProperties(Settings s) {
        Properties props = new Properties();
        props.setProperty("name", "stock-outbox");
        props.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        props.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        props.setProperty("offset.storage.file.filename", s.offsets().toString());
        props.setProperty("offset.flush.interval.ms", "60000");
        props.setProperty("database.hostname", s.host());
        props.setProperty("database.port", Integer.toString(s.port()));
        props.setProperty("database.user", s.user());
        props.setProperty("database.password", s.password() == null ? "" : s.password());
        props.setProperty("database.dbname", s.database());
        props.setProperty("topic.prefix", "stock");
        props.setProperty("plugin.name", "pgoutput");
        props.setProperty("slot.name", s.slot());
        props.setProperty("publication.name", s.publication());
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
        props.setProperty("transforms.outbox.route.topic.replacement", s.topicTemplate());
        props.setProperty("key.converter.schemas.enable", "false");
        props.setProperty("value.converter.schemas.enable", "false");
        return props;
    }

    /** Debezium's documented change consumer: send the batch, wait for every ack, then mark it processed. */
    private void sendAndWait(List<ChangeEvent<String, String>> records,
                             DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer)
            throws InterruptedException {
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
            } catch (java.util.concurrent.ExecutionException e) {
                failure.compareAndSet(null, "send failed: " + e.getCause());
                throw new IllegalStateException("send failed", e.getCause());
            }
        }
        for (ChangeEvent<String, String> r : records) {
            committer.markProcessed(r);
        }
        committer.markBatchFinished();
        acked.addAndGet(records.size());
    }

    /** Events Kafka acknowledged so far. */
    public long acked() {
        return acked.get();
    }

    /** Why the engine stopped, or null while it runs. */
    public String failure() {
        return failure.get();
    }

    @Override
    public void close() {
        try {
            engine.close();
        } catch (Exception e) {
            failure.compareAndSet(null, "close: " + e);
        }
        executor.shutdown();
        try {
            executor.awaitTermination(Duration.ofMinutes(1).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(10));
    }
}
