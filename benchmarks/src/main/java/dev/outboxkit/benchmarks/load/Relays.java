package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The two relays as the benchmarks run them: default settings (what a user gets), pointed at a
 * benchmark database and topic, with a meter registry to count what Kafka acknowledged.
 */
public final class Relays {

    /** The counter both relays increment per event Kafka acknowledged. */
    public static final String PUBLISHED = "outbox.relay.published";
    private static final AtomicLong SLOTS = new AtomicLong();

    private Relays() {
    }

    /** A polling relay with its defaults, on its own pool, publishing to {@code route}. */
    public static PollingRelay poller(TestDatabase db, String bootstrap, TopicRoute route, MeterRegistry registry) {
        return poller(db.jdbcUrl(), db.user(), db.password(), bootstrap, route, registry);
    }

    /** The same, tracing through {@code openTelemetry} (null: not tracing). */
    public static PollingRelay poller(TestDatabase db, String bootstrap, TopicRoute route, MeterRegistry registry,
                                      OpenTelemetry openTelemetry) {
        return pollerBuilder(db.jdbcUrl(), db.user(), db.password(), bootstrap, route, registry).tracing(openTelemetry).build();
    }

    /** The same, from connection settings (for a relay in a child JVM). */
    public static PollingRelay poller(String jdbcUrl, String user, String password, String bootstrap, TopicRoute route,
                                      MeterRegistry registry) {
        return pollerBuilder(jdbcUrl, user, password, bootstrap, route, registry).build();
    }

    /** A polling relay's builder with its defaults (then set what a scenario varies). */
    public static PollingRelay.Builder pollerBuilder(TestDatabase db, String bootstrap, TopicRoute route,
                                                     MeterRegistry registry) {
        return pollerBuilder(db.jdbcUrl(), db.user(), db.password(), bootstrap, route, registry);
    }

    /** The same, from connection settings (for a relay in a child JVM). */
    public static PollingRelay.Builder pollerBuilder(String jdbcUrl, String user, String password, String bootstrap,
                                                      TopicRoute route, MeterRegistry registry) {
        return PollingRelay.builder()
                .jdbcUrl(jdbcUrl).user(user).password(Secret.of(password))
                .bootstrapServers(bootstrap)
                .route(route)
                .meterRegistry(registry);
    }

    /**
     * A CDC relay with its defaults (table drained at start-up, then the WAL; rows deleted after
     * publishing) and a slot name no other run uses; drop the slot with {@code TestDatabase.dropReplicationSlot}
     * after closing it, or the benchmark database cannot be dropped.
     */
    public static CdcRelay cdc(TestDatabase db, String bootstrap, TopicRoute route, MeterRegistry registry) {
        return cdc(db.jdbcUrl(), db.user(), db.password(), bootstrap, route, uniqueSlot("bench_cdc"), registry)
                .build();
    }

    /** A CDC relay's builder with its defaults, from connection settings and a slot (for a relay in a child JVM). */
    public static CdcRelay.Builder cdc(String jdbcUrl, String user, String password, String bootstrap, TopicRoute route,
                                       String slot, MeterRegistry registry) {
        return CdcRelay.builder()
                .jdbcUrl(jdbcUrl).user(user).password(Secret.of(password))
                .bootstrapServers(bootstrap)
                .route(route)
                .slotName(slot)
                .meterRegistry(registry);
    }

    /** A replication slot name unique in this benchmark run (slots are per server, not per database). */
    public static String uniqueSlot(String prefix) {
        return Identifiers.requireValid("slot", prefix + "_" + ProcessHandle.current().pid() + "_" + SLOTS.incrementAndGet());
    }

    /** True when {@code schema.outbox_event} holds no row. */
    public static boolean tableEmpty(Connection c, String schema) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT NOT EXISTS (SELECT 1 FROM " + Identifiers.qualified(schema, "outbox_event") + ")")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    /** Events Kafka acknowledged so far, by the relay's {@value #PUBLISHED} counter(s) in {@code registry}. */
    public static double published(MeterRegistry registry) {
        return registry.find(PUBLISHED).counters().stream().mapToDouble(Counter::count).sum();
    }
}
