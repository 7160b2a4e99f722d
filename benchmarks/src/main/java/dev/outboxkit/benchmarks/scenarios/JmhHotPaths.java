package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.Sizes;
import dev.outboxkit.benchmarks.jmh.EventIdsBenchmark;
import dev.outboxkit.benchmarks.jmh.KafkaRecordsBenchmark;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * JMH for the in-process hot paths every event crosses: {@code KafkaRecords.toRecord} (200 B
 * and 1 KB payloads) and {@code EventIds.next()}, average time per call. JMH runs in forked
 * JVMs (in this JVM for the smoke test) with the sizes' iterations. To add a benchmark: write
 * the class in {@code dev.outboxkit.benchmarks.jmh} and give its method a key in {@link #KEYS}.
 */
public final class JmhHotPaths implements Scenario {

    /** Benchmark method (class#method) → key; a {@code payloadBytes} parameter adds the payload suffix. */
    static final Map<String, Metric> KEYS = keys();

    private static Map<String, Metric> keys() {
        Map<String, Metric> m = new LinkedHashMap<>();
        m.put(KafkaRecordsBenchmark.class.getName() + ".toRecord", Metric.of("jmh_to_record_ns", "ns/op",
                "KafkaRecords.toRecord of one outbox event with one extra header, JMH average"));
        m.put(EventIdsBenchmark.class.getName() + ".next", Metric.of("jmh_event_id_ns", "ns/op",
                "EventIds.next(): one UUIDv7, JMH average"));
        return Map.copyOf(m);
    }

    @Override
    public String name() {
        return "jmh_hot_paths";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(KEYS.get(KafkaRecordsBenchmark.class.getName() + ".toRecord"),
                KEYS.get(KafkaRecordsBenchmark.class.getName() + ".toRecord").forPayload(1024),
                KEYS.get(EventIdsBenchmark.class.getName() + ".next"));
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        // Other JMH runs on a shared machine must not make this one refuse to start.
        System.setProperty("jmh.ignoreLock", "true");
        Sizes sizes = context.sizes();
        TimeValue iteration = TimeValue.milliseconds(sizes.jmhIteration().toMillis());
        Options options = new OptionsBuilder()
                .include(Pattern.quote(KafkaRecordsBenchmark.class.getName()) + "|" + Pattern.quote(EventIdsBenchmark.class.getName()))
                .forks(sizes.jmhForks())
                .warmupIterations(sizes.jmhWarmups())
                .warmupTime(iteration)
                .measurementIterations(sizes.jmhIterations())
                .measurementTime(iteration)
                .timeUnit(TimeUnit.NANOSECONDS)
                // replaces the benchmark JVM's own options (its -Xms1g would clash with a small heap)
                .jvmArgs("-Xms512m", "-Xmx512m")
                .shouldFailOnError(true)
                .verbosity(sizes.mode() == Sizes.Mode.SMOKE ? VerboseMode.SILENT : VerboseMode.NORMAL)
                .build();
        Collection<RunResult> results = new Runner(options).run();
        Measurements m = new Measurements();
        for (RunResult result : results) {
            String benchmark = result.getParams().getBenchmark();
            Metric metric = KEYS.get(benchmark);
            if (metric == null) {
                throw new IllegalStateException("JMH benchmark " + benchmark + " has no key in JmhHotPaths.KEYS");
            }
            String payload = result.getParams().getParam("payloadBytes");
            String key = payload == null ? metric.key() : metric.forPayload(Integer.parseInt(payload)).key();
            m.put(key, result.getPrimaryResult().getScore());
        }
        return m;
    }
}
