package dev.outboxkit.benchmarks.jmh;

import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** The row → record mapping both relays run for every event. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class KafkaRecordsBenchmark {

    @Param({"200", "1024"})
    public int payloadBytes;

    private KafkaRecords records;
    private OutboxEvent event;

    @Setup
    public void setUp() {
        records = new KafkaRecords(TopicRoute.defaultRoute());
        event = new OutboxEvent(EventIds.next(), SyntheticEvents.AGGREGATE_TYPE, SyntheticEvents.aggregateId(42),
                SyntheticEvents.EVENT_TYPE, null, SyntheticEvents.payload(42, payloadBytes),
                Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), Instant.now());
    }

    @Benchmark
    public ProducerRecord<byte[], byte[]> toRecord() {
        return records.toRecord(event);
    }
}
