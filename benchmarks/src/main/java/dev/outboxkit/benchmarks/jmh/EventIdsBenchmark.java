package dev.outboxkit.benchmarks.jmh;

import dev.outboxkit.core.EventIds;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;

/** A new UUIDv7 event id: once per event written. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EventIdsBenchmark {

    @Benchmark
    public UUID next() {
        return EventIds.next();
    }
}
