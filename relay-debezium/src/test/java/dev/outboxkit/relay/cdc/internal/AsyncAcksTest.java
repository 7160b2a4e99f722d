package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.cdc.CdcOptions;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.StopOnFailure;
import dev.outboxkit.runtime.TracedRecords;
import dev.outboxkit.runtime.Tracing;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.StopEngineException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

/**
 * With {@code maxInFlight} above a batch, the stream handler does not wait for Kafka inside a batch, yet marks a
 * position only once Kafka answered every record up to it: Debezium's records in, a {@link MockProducer} that acknowledges only when told.
 * (That nothing is lost or reordered with a real broker is proven by the integration tests of this module.)
 */
class AsyncAcksTest {

    private static final Schema SOURCE = SchemaBuilder.struct().field("schema", Schema.STRING_SCHEMA)
            .field("table", Schema.STRING_SCHEMA).build();
    private static final Schema ROW = SchemaBuilder.struct().field("seq", Schema.INT64_SCHEMA)
            .field("id", Schema.STRING_SCHEMA).field("aggregate_type", Schema.STRING_SCHEMA)
            .field("aggregate_id", Schema.STRING_SCHEMA).field("event_type", Schema.STRING_SCHEMA)
            .field("payload", Schema.STRING_SCHEMA).field("headers", Schema.STRING_SCHEMA)
            .field("created_at", Schema.STRING_SCHEMA).build();
    private static final Schema CHANGE = SchemaBuilder.struct().field("op", Schema.STRING_SCHEMA).field("source", SOURCE)
            .field("after", ROW).build();

    private final MockProducer<byte[], byte[]> producer =
            new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
    private final Committer committer = new Committer();
    private long lsn = 100;
    private long seq;

    @Test
    void aBatchReturnsBeforeKafkaAnswersAndItsPositionIsMarkedOnceEverythingUpToItIs() throws Exception {
        StreamHandler handler = handler(1_000);
        List<RecordChangeEvent<SourceRecord>> first = transaction(1, 3);
        handler.handleBatch(first, committer);
        assertThat(producer.history()).hasSize(3);
        assertThat(committer.marked).isEmpty();

        List<RecordChangeEvent<SourceRecord>> second = transaction(2, 2);
        handler.handleBatch(second, committer);
        assertThat(producer.history()).hasSize(5);
        assertThat(committer.marked).isEmpty();

        // Kafka answers the first transaction: the next batch marks its last change, not the second's
        for (int i = 0; i < 3; i++) {
            producer.completeNext();
        }
        List<RecordChangeEvent<SourceRecord>> third = transaction(3, 1);
        handler.handleBatch(third, committer);
        assertThat(committer.marked).containsExactly(first.get(2));

        for (int i = 0; i < 3; i++) {
            producer.completeNext();
        }
        handler.handleBatch(List.of(commitOf(3)), committer);
        assertThat(committer.marked).containsExactly(first.get(2), second.get(1), third.get(0));
        assertThat(committer.batchesFinished).isEqualTo(4);
    }

    @Test
    void pastMaxInFlightTheHandlerWaitsForTheOldestBatch() throws Exception {
        StreamHandler handler = handler(4);
        List<RecordChangeEvent<SourceRecord>> first = transaction(1, 3);
        handler.handleBatch(first, committer);
        CompletableFuture<Void> second = CompletableFuture.runAsync(() -> {
            try {
                handler.handleBatch(transaction(2, 3), committer);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        // the second batch is handed over, then the handler waits: 6 records are unanswered
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !second.isDone());
        assertThat(committer.marked).isEmpty();
        for (int i = 0; i < 3; i++) {
            producer.completeNext();
        }
        second.get(10, TimeUnit.SECONDS);
        assertThat(producer.history()).hasSize(6);
        assertThat(committer.marked).containsExactly(first.get(2));
    }

    @Test
    void aRecordKafkaDidNotAcknowledgeFailsTheHandlerAndNothingAfterItIsMarked() throws Exception {
        StreamHandler handler = handler(1_000);
        handler.handleBatch(transaction(1, 2), committer);
        producer.errorNext(new TimeoutException("no answer within delivery.timeout.ms"));
        producer.completeNext();
        assertThatThrownBy(() -> handler.handleBatch(List.of(commitOf(1)), committer))
                .isInstanceOf(Publisher.PublishFailedException.class)
                .hasMessageContaining("Kafka did not acknowledge event")
                .hasMessageContaining("retried from the last stored offset");
        assertThat(committer.marked).isEmpty();
    }

    @Test
    void aGracefulStopWaitsForEveryAnswerAndMarksTheLastBoundary() throws Exception {
        StreamHandler handler = handler(1_000);
        List<RecordChangeEvent<SourceRecord>> first = transaction(1, 2);
        handler.handleBatch(first, committer);
        handler.requestStop();
        CompletableFuture<Void> stop = CompletableFuture.runAsync(() -> assertThatThrownBy(
                () -> handler.handleBatch(List.of(commitOf(1)), committer))
                .as("the stop point ends Debezium's polling").isInstanceOf(StopEngineException.class));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !stop.isDone());
        producer.completeNext();
        producer.completeNext();
        stop.get(10, TimeUnit.SECONDS);
        assertThat(handler.awaitStopped(Duration.ofSeconds(1))).isTrue();
        assertThat(committer.marked).containsExactly(first.get(1));
    }

    /**
     * The stop point ends Debezium's polling (StopEngineException), so that its engine closes itself with no thread
     * interrupted: closed from outside, it interrupted the polling thread in the task's offset read at its next poll
     * (logged at ERROR on a clean stop), or failed a batch polled meanwhile on its shut-down record pool. A batch that
     * still arrives past the stop point ends the polling too, neither published nor marked.
     */
    @Test
    void theStopPointEndsDebeziumsPollingAndABatchPastItIsNeitherPublishedNorMarked() throws Exception {
        StreamHandler handler = handler(0);
        handler.requestStop();
        assertThatThrownBy(() -> handler.handleBatch(List.of(commitOf(1)), committer)) // at a boundary: the stop point
                .isInstanceOf(StopEngineException.class);
        assertThat(handler.awaitStopped(Duration.ofSeconds(1))).isTrue();
        assertThat(handler.pollingEnded()).isTrue();
        assertThat(committer.batchesFinished).as("the stop point's offset is flushed before the polling ends").isPositive();
        assertThatThrownBy(() -> handler.handleBatch(transaction(2, 2), committer))
                .isInstanceOf(StopEngineException.class);
        assertThat(producer.history()).as("nothing published past the stop point").isEmpty();
        assertThat(committer.marked).isEmpty();
    }

    private StreamHandler handler(int maxInFlight) {
        CdcSettings settings = TestSettings.of(new DatabaseLogin("jdbc:postgresql://localhost/none", "u", Secret.of("p")), "s",
                "i", Map.of(CdcOptions.DELETE_AFTER_PUBLISH, false, CdcOptions.MAX_IN_FLIGHT, maxInFlight));
        CdcMetrics metrics = new CdcMetrics(settings.meterRegistry(), "s");
        // deleteAfterPublish=false and no dead letters: the sink never touches its (absent) database
        RowSink sink = new RowSink(null, CdcWiring.slotTerms(settings), settings.instanceId(), null, () -> 1, e -> { }, metrics);
        // no flush requests: MockProducer.flush() would acknowledge everything at once
        Publisher publisher = new Publisher(new StopOnFailure(() -> producer, "test"), new RowAttempts(10), new TracedRecords(settings.route(), Tracing.OFF), metrics,
                Clock.systemUTC(), () -> { });
        return new StreamHandler(new ChangeDecoder("public", EngineConfig.HEARTBEAT_TOPIC_PREFIX), publisher, sink, metrics,
                new FlushPolicy(Duration.ofSeconds(1)), () -> true, null, true, maxInFlight, false, what -> { });
    }

    /** {@code n} inserts of transaction {@code tx}; the transaction is proven complete by the next one's first record. */
    private List<RecordChangeEvent<SourceRecord>> transaction(long tx, int n) {
        List<RecordChangeEvent<SourceRecord>> records = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long at = lsn++;
            Struct row = new Struct(ROW).put("seq", ++seq).put("id", UUID.randomUUID().toString())
                    .put("aggregate_type", "order").put("aggregate_id", "a-" + seq).put("event_type", "Placed")
                    .put("payload", "{\"n\": " + seq + "}").put("headers", "{}")
                    .put("created_at", "2026-12-01T10:00:00.000001+00:00");
            Struct change = new Struct(CHANGE).put("op", "c")
                    .put("source", new Struct(SOURCE).put("schema", "public").put("table", "outbox_event")).put("after", row);
            records.add(event(new SourceRecord(Map.of(), Map.of("txId", tx, "messageType", "INSERT", "lsn", at,
                    "lsn_proc", at, "lsn_commit", 1L), "outboxkit.public.outbox_event", CHANGE, change)));
        }
        return records;
    }

    /** Debezium's position right after transaction {@code tx}'s COMMIT was read. */
    private RecordChangeEvent<SourceRecord> commitOf(long tx) {
        long at = lsn++;
        return event(new SourceRecord(Map.of(), Map.of("txId", tx, "messageType", "COMMIT", "lsn", at, "lsn_proc", at,
                "lsn_commit", at), EngineConfig.HEARTBEAT_TOPIC_PREFIX + ".outboxkit", null, null));
    }

    private static RecordChangeEvent<SourceRecord> event(SourceRecord record) {
        return () -> record;
    }

    /** Records what the handler marks, in order. */
    private static final class Committer implements DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> {
        final List<RecordChangeEvent<SourceRecord>> marked = new ArrayList<>();
        int batchesFinished;

        @Override
        public void markProcessed(RecordChangeEvent<SourceRecord> record) {
            marked.add(record);
        }

        @Override
        public void markBatchFinished() {
            batchesFinished++;
        }

        @Override
        public void markProcessed(RecordChangeEvent<SourceRecord> record, DebeziumEngine.Offsets offsets) {
            marked.add(record);
        }

        @Override
        public DebeziumEngine.Offsets buildOffsets() {
            throw new UnsupportedOperationException("not used by the relay");
        }
    }
}
