package dev.outboxkit.relay.cdc.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.RelayMetric;
import dev.outboxkit.relay.cdc.CdcOptions;
import dev.outboxkit.runtime.ConnectionPools;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.KafkaReachability;
import dev.outboxkit.runtime.LeaseTiming;
import dev.outboxkit.runtime.RelayReports;
import dev.outboxkit.runtime.OptionValues;
import dev.outboxkit.runtime.StopOnFailure;
import dev.outboxkit.runtime.TracedRecords;
import dev.outboxkit.runtime.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;

/**
 * Not API: public for {@code dev.outboxkit.relay.cdc.CdcRelay}.
 *
 * <p>The one place that reads a {@link CdcSettings}: {@link #supervisor} builds it from the builder's values, reads it once and builds the {@link Supervisor}
 * with the values it uses, and with this wiring, which makes the relay's other parts (at start, once the pool is open,
 * and per session) from the few values each of them uses.
 */
public final class CdcWiring {

    private final SlotTerms slot;
    private final String instanceId;
    private final String logPrefix;
    private final DatabaseLogin login;
    private final Map<String, Object> producerConfig;
    private final TopicRoute route;
    private final Function<Map<String, Object>, Producer<byte[], byte[]>> producers;
    private final Tracing tracing;
    private final Clock clock;
    private final LeaseTiming timing;
    private final String schema;
    private final Session.Terms sessionTerms;

    private CdcWiring(CdcSettings s, Function<Map<String, Object>, Producer<byte[], byte[]>> producers) {
        this.slot = slotTerms(s);
        this.instanceId = s.instanceId();
        this.logPrefix = s.logPrefix();
        this.login = s.login();
        this.producerConfig = s.producerConfig();
        this.route = s.route();
        this.producers = producers;
        this.sessionTerms = new Session.Terms(slot, instanceId, login, JdbcTarget.parse(s.jdbcUrl()), engineTuning(s),
                s.timing().lease(), s.timing().renewInterval(), s.shutdownTimeout(), s.maxInFlight());
        this.tracing = s.tracing();
        this.clock = s.clock();
        this.timing = s.timing();
        this.schema = s.schema();
    }

    /**
     * The relay configured by the builder's values ({@link CdcSettings#of}, which checks them).
     *
     * @param producers makes the relay's producer from the checked configuration; null: Kafka's producer (tests pass a
     *                  MockProducer)
     */
    public static Supervisor supervisor(OptionValues options, DatabaseLogin login, String instanceId,
                                        Function<Map<String, ?>, Map<String, Object>> producerConfig, TopicRoute route,
                                        MeterRegistry meterRegistry, Clock clock, Tracing tracing,
                                        Function<Map<String, Object>, Producer<byte[], byte[]>> producers) {
        CdcSettings settings = CdcSettings.of(options, login, instanceId, producerConfig, route, meterRegistry, clock, tracing);
        return supervisor(settings, producers == null ? KafkaProducer::new : producers);
    }

    /** @param producers makes the relay's producer from the checked configuration (tests pass a MockProducer) */
    static Supervisor supervisor(CdcSettings settings, Function<Map<String, Object>, Producer<byte[], byte[]>> producers) {
        Supervisor.Terms terms = new Supervisor.Terms(settings.slotName(), settings.instanceId(), settings.logPrefix(),
                settings.jdbcUrl(), settings.describe(), settings.startTimeout(), settings.shutdownTimeout(),
                settings.timing().stallAfter());
        return new Supervisor(terms, new CdcMetrics(settings.meterRegistry(), settings.slotName()),
                new RowAttempts(settings.maxAttempts()), new CdcWiring(settings, producers));
    }

    /**
     * The relay's default settings ({@link CdcOptions}, {@code RelayOptions}) for the slot {@code slotName}, as far as
     * {@link DebeziumAlone} uses them.
     */
    static DebeziumAlone.Terms debeziumAlone(DatabaseLogin login, String slotName) {
        CdcSettings s = CdcSettings.of(OptionValues.of(Map.of(CdcOptions.SLOT_NAME, slotName)), login, "debezium-alone",
                noKafka -> Map.of(), TopicRoute.defaultRoute(), new SimpleMeterRegistry(), Clock.systemUTC(), Tracing.OFF);
        return new DebeziumAlone.Terms(slotTerms(s), engineTuning(s), s.login(), s.instanceId(), s.logPrefix());
    }

    static SlotTerms slotTerms(CdcSettings s) {
        return new SlotTerms(s.slotName(), s.publicationName(), s.tables(), s.leaseKey(), s.deleteAfterPublish(),
                s.failoverSlot());
    }

    static EngineTuning engineTuning(CdcSettings s) {
        return new EngineTuning(s.offsetFlushInterval(), s.heartbeatInterval(), s.maxBatchSize(), s.pollInterval());
    }

    /** The relay's own pool (leases, offsets, deletes, dead letters), its sessions named for the slot and instance. */
    HikariDataSource openPool() {
        return ConnectionPools.open(login, "outboxkit-cdc-" + slot.slotName(), 6,
                SlotGuard.applicationName(slot.slotName(), instanceId));
    }

    LeaseKeeper leaseKeeper(DataSource pool, CdcMetrics metrics) {
        return new LeaseKeeper(pool, slot, instanceId, timing.lease(), metrics.takeovers);
    }

    /** The instance's report ({@code relay=cdc}), its verdict from {@code health}. */
    RelayReports reports(DataSource pool, CdcMetrics metrics, Supplier<Relay.Health> health) {
        return new RelayReports(pool, new RelayReports.Terms(RelayMetric.CDC, instanceId, logPrefix, schema, timing,
                "outboxkit-cdc-report-" + slot.slotName()), health, metrics);
    }

    SlotGuard slotGuard() {
        return new SlotGuard(slot, instanceId, logPrefix, login);
    }

    /** Throws when Kafka's TLS settings name a truststore that does not trust the broker. */
    void refuseUntrustedBroker() {
        KafkaReachability.refuseUntrustedBroker(producerConfig, "the " + logPrefix);
    }

    StateTables stateTables(DataSource pool, LeaseKeeper lease) {
        return new StateTables(pool, slot, instanceId, lease);
    }

    SlotMonitor slotMonitor(CdcMetrics metrics, HikariDataSource pool, SlotGuard guard, Supplier<Session> activeSession) {
        return new SlotMonitor(slot, login, metrics, pool, guard, activeSession);
    }

    StopOnFailure producer(CdcMetrics metrics) {
        return new StopOnFailure(() -> producers.apply(producerConfig), logPrefix, metrics.kafkaWrites);
    }

    KafkaReachability kafkaProbe(CdcMetrics metrics) {
        return new KafkaReachability(producerConfig, logPrefix, "outboxkit-cdc-kafka-probe-" + slot.slotName(), metrics,
                route);
    }

    StandbyWarmup standbyWarmup(DataSource pool, StopOnFailure producer, BooleanSupplier standingBy) {
        return new StandbyWarmup(slot, route, producerConfig, pool, producer, standingBy);
    }

    Session.Terms sessionTerms() {
        return sessionTerms;
    }

    /** A session's publisher: {@code flush} asks the session's flusher to send the producer's buffer now. */
    Publisher publisher(StopOnFailure producer, RowAttempts attempts, CdcMetrics metrics, Runnable flush) {
        return new Publisher(producer, attempts, new TracedRecords(route, tracing), metrics, clock, flush, producerConfig);
    }
}
