package dev.outboxkit.ops;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.ops.internal.OpsSettings;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import javax.sql.DataSource;

/**
 * The settings that {@link dev.outboxkit.ops.reconcile.Reconciler.Builder} and
 * {@link dev.outboxkit.ops.retention.Retention.Builder} share, declared once: the outbox database (the one holding the outbox
 * tables) and its schema, the clock and the meter registry. Each tool's class Javadoc says what it reads from that
 * schema, what
 * its clock decides and which meters it registers. ({@link dev.outboxkit.ops.admin.OutboxAdmin.Builder} takes the
 * database and a clock but registers no meters, so it does not extend this.)
 *
 * <p>Written for outboxkit's own builders: its constructor is protected only so that builders in the other
 * outbox-ops packages can extend it.
 *
 * @param <B> the builder itself, so that every setter returns it for chaining
 */
public abstract class OpsBuilder<B extends OpsBuilder<B>> {

    /**
     * What {@link #resolveSettings()} checked: the outbox database, its tables, the clock and the registry.
     *
     * @param dataSource the outbox database
     * @param tables     its tables, in the validated schema
     * @param clock      the tool's clock
     * @param registry   where the tool's meters go
     */
    public record Resolved(DataSource dataSource, OutboxTables tables, Clock clock, MeterRegistry registry) {
        /** The validated schema name. */
        public String schema() {
            return tables.schema();
        }
    }

    private final OpsSettings settings = new OpsSettings();
    private String actor;

    /** For the builders of outbox-ops. */
    protected OpsBuilder() {
    }

    /**
     * The outbox database (the one the writer writes the outbox tables in) and the schema holding its tables
     * (default {@value OutboxTables#DEFAULT_SCHEMA}). Required.
     */
    public final B outboxDatabase(DataSource dataSource, String schema) {
        settings.outboxDatabase(dataSource, schema);
        return self();
    }

    /**
     * The old name of {@link #outboxDatabase(DataSource, String)}, which it calls.
     *
     * @deprecated use {@link #outboxDatabase(DataSource, String)}; removed in 0.2.0
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public final B producer(DataSource dataSource, String schema) {
        return outboxDatabase(dataSource, schema);
    }

    /**
     * The clock the tool reads now from (tests pin it; {@code ManualClock} of the test kit moves by hand). Default
     * the UTC system clock.
     */
    public final B clock(Clock clock) {
        settings.clock(clock);
        return self();
    }

    /** Where the tool's meters go (the tool's class Javadoc names them). Default a {@code SimpleMeterRegistry}. */
    public final B meterRegistry(MeterRegistry registry) {
        settings.meterRegistry(registry);
        return self();
    }

    /**
     * Who runs the tool, as its entries in the operations journal name it (e.g. {@code outbox-cli alice@ops-1}). Default
     * {@code <os user>@<host>}.
     */
    public final B actor(String actor) {
        if (actor == null || actor.isBlank()) {
            throw new IllegalArgumentException("actor must name who runs the tool, e.g. outbox-cli alice@host");
        }
        this.actor = actor;
        return self();
    }

    /** The {@link #actor(String)} given, or {@code <os user>@<host>}. */
    protected final String resolvedActor() {
        return actor != null ? actor : dev.outboxkit.ops.internal.Journal.defaultActor();
    }

    /**
     * Checks the shared settings, for the subclass's {@code build()}.
     *
     * @throws IllegalArgumentException when the DataSource is missing or the schema is not a legal identifier (the
     *                                  message names the setting)
     */
    protected final Resolved resolveSettings() {
        return settings.resolve();
    }

    /**
     * The old name of {@link #resolveSettings()}, which it calls.
     *
     * @deprecated use {@link #resolveSettings()}; removed in 0.2.0
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    protected final Resolved resolveProducer() {
        return resolveSettings();
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
