package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.cdc.spi.DebeziumCeiling;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;

/**
 * {@code debezium_ceiling_eps}: Debezium Embedded alone ({@link DebeziumCeiling}: the CDC relay's own connector
 * settings and slot set-up, a handler that only marks records processed) streaming the same backlog as
 * {@link CdcDrain}, on the same clock: from the COPY's commit until Debezium handed over every row. The WAL
 * relay's drain is reported as a ratio of it ({@code cdc_vs_debezium_ceiling}).
 */
public final class DebeziumCeilingDrain extends BacklogDrain {

    public DebeziumCeilingDrain() {
        super("debezium_ceiling_drain", MetricCatalog.DEBEZIUM_CEILING_EPS, "debezium_ceiling", "Debezium alone's drain");
    }

    @Override
    void drain(BenchContext context, TestDatabase db, int backlog, DrainClock clock) throws Exception {
        String slot = Relays.uniqueSlot("bench_dbz_alone");
        try (DebeziumCeiling alone = DebeziumCeiling.start(db.jdbcUrl(), db.user(), Secret.of(db.password()), slot)) {
            // streaming once a heartbeat (or anything) came through, like the relay's readiness
            Await.until("Debezium alone streaming", () -> alone.records() > 0, Duration.ofMinutes(2), 20, alone::failure);
            Backlog.copy(db, SCHEMA, backlog, context.payloadBytes());
            clock.start();
            Await.until("Debezium alone streaming " + backlog + " rows", () -> alone.outboxRecords() >= backlog,
                    drainTimeout(backlog), 5, alone::failure);
            clock.stop();
        } finally {
            db.dropReplicationSlot(slot);
        }
    }
}
