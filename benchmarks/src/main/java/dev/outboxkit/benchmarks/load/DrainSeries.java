package dev.outboxkit.benchmarks.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One relay's drain of a backlog, sampled: how far it got ({@code published}, the records Kafka holds) and what the
 * relay and the table looked like at each sample, and from it the drain rate of each successive step of the backlog
 * ({@link #stepRates}). Written as JSON beside the backlog mode's reports ({@link #write}, {@link #read}), so the
 * chart is drawn again from the files.
 *
 * @param relay     the relay's system key ({@code poller}, {@code cdc})
 * @param label     the relay's name in charts
 * @param backlog   events in the backlog
 * @param samples   in time order, the first at the relay's start (0 s, nothing published)
 */
public record DrainSeries(String relay, String label, long backlog, List<Sample> samples) {

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** The largest step, and the backlog from which every step is that large. */
    static final long MILLION = 1_000_000;

    /**
     * One look, {@code seconds} after the relay's start.
     *
     * @param published  records Kafka holds on the relay's topic
     * @param liveTuples {@code n_live_tup} of {@code outbox_event} (the statistics' estimate)
     * @param deadTuples {@code n_dead_tup}
     * @param tableBytes {@code pg_total_relation_size} (heap, indexes, TOAST)
     * @param autovacuums {@code autovacuum_count} so far
     * @param rssMb      the relay process's {@code VmRSS}, MiB
     */
    public record Sample(double seconds, long published, long liveTuples, long deadTuples, long tableBytes,
                         long autovacuums, double rssMb) {
    }

    /** The drain of one step: events {@code from} (exclusive) to {@code to}, between two instants. */
    public record Step(long from, long to, double startSeconds, double endSeconds) {
        public double eventsPerSecond() {
            return (to - from) / (endSeconds - startSeconds);
        }
    }

    /**
     * How many events one step is: a million, or a tenth of a backlog below two million (a trial run), so that a
     * drain always has several steps.
     */
    public static long stepEvents(long backlog) {
        return backlog >= 2 * MILLION ? MILLION : Math.max(1, backlog / 10);
    }

    /** Rows still to publish at a sample: the backlog less what Kafka holds (never below 0). */
    public long rowsLeft(Sample s) {
        return Math.max(0, backlog - s.published());
    }

    /**
     * The steps of {@link #stepEvents} events (the last one shorter when the backlog is no multiple), each from the
     * instant the drain crossed its start to the instant it crossed its end, both interpolated linearly between the
     * two samples around them. The first starts at the first record ({@link #firstRecordSeconds}): the relay's own
     * start (JVM, connections, leases, the producer's first metadata) is not part of any step's rate. A step the
     * samples do not reach yet is left out.
     */
    public List<Step> stepRates() {
        return stepRates(samples, backlog, stepEvents(backlog));
    }

    static List<Step> stepRates(List<Sample> samples, long backlog, long step) {
        if (step < 1) {
            throw new IllegalArgumentException("a step is at least 1 event, got " + step);
        }
        List<Step> steps = new ArrayList<>();
        Double first = crossing(samples, 1);
        if (first == null) {
            return steps;
        }
        double start = first;
        for (long from = 0; from < backlog; from += step) {
            long to = Math.min(backlog, from + step);
            Double end = crossing(samples, to);
            if (end == null) {
                break;
            }
            steps.add(new Step(from, to, start, end));
            start = end;
        }
        return steps;
    }

    /** Seconds from the relay's start to its first record in Kafka (interpolated); null when none was seen. */
    public Double firstRecordSeconds() {
        return crossing(samples, 1);
    }

    /** The instant the published count reached {@code events}, interpolated; null when no sample reached it. */
    static Double crossing(List<Sample> samples, long events) {
        Sample before = null;
        for (Sample s : samples) {
            if (s.published() >= events) {
                if (before == null || s.published() == before.published()) {
                    return s.seconds();
                }
                double share = (double) (events - before.published()) / (s.published() - before.published());
                return before.seconds() + share * (s.seconds() - before.seconds());
            }
            before = s;
        }
        return null;
    }

    /** Writes this series and its steps (for reading by eye; {@link #read} recomputes them) to {@code json}. */
    public void write(Path json) throws IOException {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("relay", relay).put("label", label).put("backlog", backlog).put("step_events", stepEvents(backlog));
        ArrayNode steps = root.putArray("steps");
        for (Step s : stepRates()) {
            steps.addObject().put("from", s.from()).put("to", s.to()).put("start_s", s.startSeconds())
                    .put("end_s", s.endSeconds()).put("events_per_s", s.eventsPerSecond());
        }
        ArrayNode rows = root.putArray("samples");
        for (Sample s : samples) {
            rows.addObject().put("seconds", s.seconds()).put("published", s.published())
                    .put("rows_left", rowsLeft(s)).put("n_live_tup", s.liveTuples()).put("n_dead_tup", s.deadTuples())
                    .put("table_bytes", s.tableBytes()).put("autovacuum_count", s.autovacuums())
                    .put("rss_mb", s.rssMb());
        }
        MAPPER.writeValue(json.toFile(), root);
    }

    /** A series {@link #write} wrote. */
    public static DrainSeries read(Path json) throws IOException {
        JsonNode root = MAPPER.readTree(json.toFile());
        List<Sample> samples = new ArrayList<>();
        for (JsonNode s : root.path("samples")) {
            samples.add(new Sample(s.path("seconds").asDouble(), s.path("published").asLong(),
                    s.path("n_live_tup").asLong(), s.path("n_dead_tup").asLong(), s.path("table_bytes").asLong(),
                    s.path("autovacuum_count").asLong(), s.path("rss_mb").asDouble()));
        }
        return new DrainSeries(root.path("relay").asText(), root.path("label").asText(), root.path("backlog").asLong(),
                List.copyOf(samples));
    }
}
