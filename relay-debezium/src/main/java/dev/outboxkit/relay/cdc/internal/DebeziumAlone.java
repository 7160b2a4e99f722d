package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.relay.cdc.CdcOptions;
import dev.outboxkit.runtime.DatabaseLogin;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Not API: for the benchmarks' {@code debezium_ceiling_eps}.
 *
 * <p>Debezium Embedded with exactly the CDC relay's connector settings ({@link EngineConfig}) and a handler
 * that only marks each record processed: no decoding of ours, no Kafka, offsets in memory. What the relay
 * drains is measured as a ratio of this, the most Debezium itself delivers on the same machine and backlog.
 */
public final class DebeziumAlone implements AutoCloseable {

    private final EngineRunner runner;
    private final AtomicLong outboxRecords = new AtomicLong();
    private final AtomicLong records = new AtomicLong();

    /**
     * The relay's default settings for one slot, as far as Debezium alone uses them ({@link CdcWiring#debeziumAlone}).
     *
     * @param logPrefix the relay's name in messages
     */
    record Terms(SlotTerms slot, EngineTuning engine, DatabaseLogin login, String instanceId, String logPrefix) {
    }

    private DebeziumAlone(Terms terms, Consumer<UUID> onOutboxRow) {
        Properties p = EngineConfig.properties(terms.slot(), terms.login(), terms.engine(),
                JdbcTarget.parse(terms.login().jdbcUrl()), "unused");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        String outboxTopic = EngineConfig.TOPIC_PREFIX + "." + terms.slot().schema() + "." + OutboxTables.OUTBOX_EVENT;
        DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> handler = (List<RecordChangeEvent<SourceRecord>> batch,
                DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) -> {
            long outbox = 0;
            for (RecordChangeEvent<SourceRecord> event : batch) {
                if (outboxTopic.equals(event.record().topic())) {
                    outbox++;
                    UUID id = onOutboxRow == null ? null : insertedId(event.record());
                    if (id != null) {
                        onOutboxRow.accept(id);
                    }
                }
                committer.markProcessed(event);
            }
            committer.markBatchFinished();
            outboxRecords.addAndGet(outbox);
            records.addAndGet(batch.size());
        };
        runner = new EngineRunner(p, handler, new FlushPolicy(terms.engine().offsetFlushInterval()), terms.slot().slotName(),
                () -> false);
    }

    /**
     * Creates the relay's publication and slot when missing (as the relay would) and starts streaming with the
     * CDC relay's default settings ({@link CdcOptions}, {@link RelayOptions}).
     */
    public static DebeziumAlone start(String jdbcUrl, String user, Secret password, String slotName) throws SQLException {
        return start(jdbcUrl, user, password, slotName, null);
    }

    /**
     * As {@link #start(String, String, Secret, String)}, and tells {@code onOutboxRow} the event id of each
     * inserted {@code outbox_event} row as Debezium hands it over (on Debezium's thread): what the benchmarks'
     * Debezium-alone latency measures. Reading one field of the change record is all it adds.
     */
    public static DebeziumAlone start(String jdbcUrl, String user, Secret password, String slotName,
                                      Consumer<UUID> onOutboxRow) throws SQLException {
        Terms terms = CdcWiring.debeziumAlone(new DatabaseLogin(jdbcUrl, user, password), slotName);
        SlotGuard guard = new SlotGuard(terms.slot(), terms.instanceId(), terms.logPrefix(), terms.login());
        Properties login = new Properties();
        login.setProperty("user", terms.login().user());
        if (terms.login().password() != null) {
            login.setProperty("password", terms.login().password().reveal());
        }
        try (Connection c = DriverManager.getConnection(terms.login().jdbcUrl(), login)) {
            guard.requireSchema(c);
            guard.ensurePublication(c);
            if (guard.slot(c) == null) {
                guard.createSlot(c, Server.of(c));
            }
        }
        DebeziumAlone alone = new DebeziumAlone(terms, onOutboxRow);
        alone.runner.start();
        return alone;
    }

    /** The {@code id} of an inserted row's change record; null for a delete (no {@code after}). */
    private static UUID insertedId(SourceRecord record) {
        Struct after = record.value() instanceof Struct envelope ? envelope.getStruct("after") : null;
        return after == null ? null : UUID.fromString(after.getString("id"));
    }

    /** Change records of {@code outbox_event} handed over so far. */
    public long outboxRecords() {
        return outboxRecords.get();
    }

    /** Every record handed over so far (heartbeats included): above 0 once Debezium streams. */
    public long records() {
        return records.get();
    }

    /** Why the engine stopped, or null while it runs. */
    public String failure() {
        try {
            EngineRunner.Outcome outcome = runner.outcome(Duration.ZERO);
            return outcome == null ? null : "Debezium stopped: " + outcome.message();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    @Override
    public void close() {
        runner.close();
    }
}
