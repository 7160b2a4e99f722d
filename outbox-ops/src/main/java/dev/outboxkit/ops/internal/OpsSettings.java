package dev.outboxkit.ops.internal;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.ops.OpsBuilder;
import dev.outboxkit.ops.OpsBuilder.Resolved;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Not API: public for {@link OpsBuilder} and {@code dev.outboxkit.ops.admin.OutboxAdmin.Builder}.
 *
 * <p>The settings every outbox-ops builder shares, with their one default and one check each: the outbox
 * database (the one holding the outbox tables) and its schema (required; schema {@value OutboxTables#DEFAULT_SCHEMA} until set), the clock (UTC) and
 * the meter registry (a {@code SimpleMeterRegistry}). {@link OpsBuilder} keeps one of these for the
 * reconciliation and retention builders; {@code OutboxAdmin.Builder}, which has no meters, keeps one of its own.
 */
public final class OpsSettings {

    private DataSource dataSource;
    private String schema = OutboxTables.DEFAULT_SCHEMA;
    private Clock clock = Clock.systemUTC();
    private MeterRegistry registry;

    public void outboxDatabase(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = schema;
    }

    public void clock(Clock clock) {
        this.clock = clock;
    }

    public void meterRegistry(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * @throws IllegalArgumentException when the DataSource is missing or the schema is not a legal identifier
     *                                  (the message names the setting)
     */
    public Resolved resolve() {
        if (dataSource == null) {
            throw new IllegalArgumentException("outboxDatabase dataSource is required");
        }
        OutboxTables tables = OutboxTables.in(schema);
        Objects.requireNonNull(clock, "clock");
        return new Resolved(dataSource, tables, clock, registry == null ? new SimpleMeterRegistry() : registry);
    }
}
