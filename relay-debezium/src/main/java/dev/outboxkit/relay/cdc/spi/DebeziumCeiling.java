package dev.outboxkit.relay.cdc.spi;

import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.cdc.internal.DebeziumAlone;
import java.sql.SQLException;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Not API: Debezium Embedded alone, with the CDC relay's connector settings, publication and slot, handing its records
 * to nothing. The benchmarks measure the relay against it (the dependency's own ceiling).
 */
public final class DebeziumCeiling implements AutoCloseable {

    private final DebeziumAlone alone;

    private DebeziumCeiling(DebeziumAlone alone) {
        this.alone = alone;
    }

    /** Creates the relay's publication and slot when missing and streams with the CDC relay's default settings. */
    public static DebeziumCeiling start(String jdbcUrl, String user, Secret password, String slotName) throws SQLException {
        return new DebeziumCeiling(DebeziumAlone.start(jdbcUrl, user, password, slotName));
    }

    /** As {@link #start(String, String, Secret, String)}, telling {@code onOutboxRow} each inserted event's id. */
    public static DebeziumCeiling start(String jdbcUrl, String user, Secret password, String slotName,
                                        Consumer<UUID> onOutboxRow) throws SQLException {
        return new DebeziumCeiling(DebeziumAlone.start(jdbcUrl, user, password, slotName, onOutboxRow));
    }

    /** Change records of {@code outbox_event} handed over so far. */
    public long outboxRecords() {
        return alone.outboxRecords();
    }

    /** Every record handed over so far (heartbeats included): above 0 once Debezium streams. */
    public long records() {
        return alone.records();
    }

    /** Why the engine stopped, or null while it runs. */
    public String failure() {
        return alone.failure();
    }

    @Override
    public void close() {
        alone.close();
    }
}
