package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.runtime.DeadLetterWriter;
import dev.outboxkit.runtime.Flusher;
import dev.outboxkit.runtime.ProducerWarmup;
import dev.outboxkit.runtime.StopOnFailure;
import dev.outboxkit.runtime.TracedRecords;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A standby keeps its producer ready to publish: otherwise a takeover's first records go out through a producer that
 * has never published, and their acknowledgements take most of the takeover's gap. While standing by, on its own
 * thread, it warms the producer's compression codec once, loads the classes of the sending path
 * ({@link ProducerWarmup#classes}) and fetches the metadata of the topics the rows now in the outbox table route to
 * (a sample of the newest; again every {@link #REFRESH}, so the producer never drops them as idle, and every
 * {@link #RETRY} while the table had no row to learn a topic from). It sends nothing, takes no lock and writes nothing: a standby stays harmless.
 */
final class StandbyWarmup implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(Supervisor.class);

    /** How often the topics' metadata is fetched again: well inside the producer's {@code metadata.max.idle.ms} (5 min). */
    static final Duration REFRESH = Duration.ofSeconds(60);
    /** How soon the table is sampled again when it held no row (an active relay keeps it nearly empty). */
    static final Duration RETRY = Duration.ofSeconds(1);
    /** Rows sampled per look. */
    private static final int SAMPLE = 50;
    /** At most this many topics are fetched per look. */
    private static final int MAX_TOPICS = 20;

    private final String slotName;
    private final String outboxTable;
    private final Map<String, Object> producerConfig;
    private final DataSource pool;
    private final StopOnFailure producers;
    private final BooleanSupplier standingBy;
    private final KafkaRecords records;
    private boolean codecWarmed;
    private long nextLookNanos;
    private final Set<String> known = new LinkedHashSet<>();

    /**
     * @param route          the relay's route (the records' topics)
     * @param producerConfig the relay's checked producer configuration (its compression)
     */
    StandbyWarmup(SlotTerms terms, TopicRoute route, Map<String, Object> producerConfig, DataSource pool,
                  StopOnFailure producers, BooleanSupplier standingBy) {
        this.slotName = terms.slotName();
        this.outboxTable = terms.outboxTable();
        this.producerConfig = producerConfig;
        this.pool = pool;
        this.producers = producers;
        this.standingBy = standingBy;
        this.records = new KafkaRecords(route);
    }

    @Override
    public void run() {
        if (!standingBy.getAsBoolean()) {
            return;
        }
        long began = System.nanoTime();
        if (!codecWarmed) {
            codecWarmed = true;
            ProducerWarmup.compression(producerConfig);
            // what a takeover's first pass runs through before its first send, besides the producer's own path
            ProducerWarmup.classes(List.of(RowSink.class, Publisher.class, Publisher.Sent.class, Publisher.Outcome.class,
                    Publisher.DeadLetter.class, StartupDrain.class, StartupDrain.Result.class, Flusher.class,
                    TracedRecords.class, TracedRecords.Traced.class, DeadLetterWriter.class));
        }
        if (began - nextLookNanos < 0) {
            return;
        }
        Set<String> topics = new LinkedHashSet<>(known);
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(true);
            for (OutboxRow row : StartupDrain.newest(c, outboxTable, SAMPLE)) {
                if (topics.size() >= MAX_TOPICS) {
                    break;
                }
                try {
                    // the mapping the drain uses, without a span: nothing is traced for a record never sent
                    topics.add(records.toRecord(row.toEvent()).topic());
                } catch (RuntimeException invalid) {
                    log.trace("standby warm-up: row {} maps to no record ({})", row.seq(), invalid.toString());
                }
            }
        } catch (SQLException | RuntimeException e) {
            log.debug("standby warm-up could not sample {}: {}", outboxTable, e.toString());
        }
        ProducerWarmup.metadata(producers.producer(), topics);
        boolean first = known.isEmpty() && !topics.isEmpty();
        known.addAll(topics);
        nextLookNanos = System.nanoTime() + (known.isEmpty() ? RETRY : REFRESH).toNanos();
        if (first) {
            log.info("standby for slot {} warmed its producer for topics {} in {} ms", slotName, topics,
                    (System.nanoTime() - began) / 1_000_000);
        }
    }
}
