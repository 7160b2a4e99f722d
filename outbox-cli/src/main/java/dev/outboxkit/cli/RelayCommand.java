package dev.outboxkit.cli;

import dev.outboxkit.core.Relay;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.core.internal.DatabaseLogin;
import dev.outboxkit.core.internal.RelayBuilder;
import dev.outboxkit.reconcile.RetentionSchedule;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.relay.poller.PollingRelay;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "relay", mixinStandardHelpOptions = true,
        description = "Run a relay as a sidecar: publish committed outbox rows to Kafka, at least once.",
        subcommands = {RelayCommand.Poll.class, RelayCommand.Cdc.class})
final class RelayCommand {

    private static final Logger log = LoggerFactory.getLogger(RelayCommand.class);

    /** Options both relays share. */
    static final class Common {
        @Option(names = "--instance-id", paramLabel = "ID", description = "Name of this instance in leases and logs (default: host, pid and a random suffix).")
        String instanceId;

        // $${…} keeps picocli from expanding the placeholders itself.
        @Option(names = "--route", paramLabel = "TEMPLATE", defaultValue = "outbox.event.$${aggregateType}",
                converter = Options.RouteConverter.class,
                description = "Topic for rows without one; $${aggregateType} and $${eventType} are filled in.")
        TopicRoute route;

        @Option(names = "--lease-duration", paramLabel = "DURATION", defaultValue = "PT10S",
                description = "How long a lease lasts without renewal (ISO-8601, e.g. PT10S); a paused instance is fenced after it.")
        Duration leaseDuration;

        @Option(names = "--retention-interval", paramLabel = "DURATION",
                description = "Run the retention job of 'outbox purge' (same windows and options) every DURATION, e.g. PT1H; "
                        + "one sidecar per schema at a time (advisory lock). Default: off (it needs the ledger owner's rights).")
        Duration retentionInterval;

        @Mixin
        Options.RetentionWindows retention;
    }

    /** The retention job on its schedule, with the pools it runs on. */
    private static final class SidecarRetention implements AutoCloseable {
        private final Options.RetentionJob job;
        private final RetentionSchedule schedule;

        private SidecarRetention(Options.RetentionJob job, RetentionSchedule schedule) {
            this.job = job;
            this.schedule = schedule;
        }

        /** Null when --retention-interval is not set; configuration errors exit 2 before the relay starts. */
        static SidecarRetention of(Common common, Options.Database db, Options.Kafka kafka, Settings settings,
                                   PrometheusMeterRegistry registry) {
            if (common.retentionInterval == null) {
                return null;
            }
            Options.RetentionJob job = common.retention.open(db, kafka, settings, "outbox-retention", registry);
            try {
                return new SidecarRetention(job, RetentionSchedule.builder().retention(job.retention)
                        .interval(common.retentionInterval).meterRegistry(registry).build());
            } catch (IllegalArgumentException e) {
                job.close();
                throw new ConfigurationException("Invalid value for option '--retention-interval': " + e.getMessage());
            }
        }

        @Override
        public void close() {
            try {
                schedule.close();
            } finally {
                job.close();
            }
        }
    }

    /**
     * Runs a relay (and, with --retention-interval, the retention schedule) until SIGTERM/SIGINT,
     * serving health and metrics; exit 0 after a graceful stop. Retention never affects health.
     */
    static int serve(String kind, Relay relay, PrometheusMeterRegistry registry, int httpPort, PrintWriter out,
                     java.util.function.Supplier<SidecarRetention> retentionSetup) throws Exception {
        SidecarRetention retention;
        try {
            retention = retentionSetup.get();
        } catch (RuntimeException e) {
            relay.close();
            throw e;
        }
        Shutdown shutdown = Shutdown.onSignals();
        SidecarServer http = null;
        try {
            relay.start();
            if (httpPort >= 0) {
                http = new SidecarServer(httpPort, relay::health, registry);
            }
            if (retention != null) {
                retention.schedule.start();
            }
            out.println("relay " + kind + " started" + (http == null ? "" : "; health and metrics on http://0.0.0.0:" + http.port()));
            out.flush();
            shutdown.await();
            log.info("relay {}: stop requested, finishing the batch in flight and releasing leases", kind);
        } finally {
            try {
                if (retention != null) {
                    retention.close();
                }
            } finally {
                try {
                    relay.close();
                } finally {
                    if (http != null) {
                        http.close();
                    }
                }
            }
        }
        out.println("relay " + kind + " stopped");
        out.flush();
        return Main.OK;
    }

    /** What both relay subcommands share: their options, the builder settings those map to, and serving. */
    abstract static class Sidecar implements Callable<Integer>, Main.NeedsSettings {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Options.Database db;
        @Mixin
        Options.Kafka kafka;
        @Mixin
        Options.Http http;
        @Mixin
        Common common;
        Settings settings;

        @Override
        public void settings(Settings settings) {
            this.settings = settings;
        }

        /** "poll" or "cdc". */
        abstract String kind();

        /** What the start-up log line says about the source beyond the database. */
        String source() {
            return "";
        }

        /** The relay, from {@link #shared} plus its own options. */
        abstract Relay relay(Map<String, Object> producer, PrometheusMeterRegistry registry);

        /** The options both relays take the same way, applied to the relay's builder. */
        <B extends RelayBuilder<B>> B shared(B builder, Map<String, Object> producer) {
            DatabaseLogin login = db.loginWithUser();
            return builder.jdbcUrl(login.jdbcUrl())
                    .user(login.user())
                    .password(login.password())
                    .schema(db.schema)
                    .bootstrapServers(kafka.requireBootstrap())
                    .producerOverrides(producer)
                    .route(common.route)
                    .leaseDuration(common.leaseDuration)
                    .instanceId(common.instanceId);
        }

        @Override
        public Integer call() throws Exception {
            Map<String, Object> producer = kafka.clientProperties(settings, true);
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            Relay relay = build(() -> relay(producer, registry));
            log.info("relay {}: {}{} → {}", kind(), db.describe(), source(), kafka.bootstrapServers);
            return serve(kind(), relay, registry, http.httpPort, spec.commandLine().getOut(),
                    () -> SidecarRetention.of(common, db, kafka, settings, registry));
        }
    }

    @Command(name = "poll", mixinStandardHelpOptions = true, showDefaultValues = true,
            description = "The polling relay: claims rows with FOR UPDATE SKIP LOCKED, publishes, deletes after the acks.")
    static final class Poll extends Sidecar {
        @Option(names = "--partitions", defaultValue = "64", description = "Lease units that aggregates hash into (the same on every instance).")
        int partitions;

        @Option(names = "--batch-size", defaultValue = "10000", description = "Rows claimed per batch (1-50000; memory about batch size × (payload + 1 KiB)).")
        int batchSize;

        @Option(names = "--after-publish", defaultValue = "DELETE", description = "What happens to a published row: ${COMPLETION-CANDIDATES}.")
        AfterPublish afterPublish;

        @Option(names = "--park-policy", defaultValue = "CONTINUE",
                description = "After a row is parked: CONTINUE publishing its aggregate (liveness) or HOLD_AGGREGATE (order).")
        ParkPolicy parkPolicy;

        @Override
        String kind() {
            return "poll";
        }

        @Override
        Relay relay(Map<String, Object> producer, PrometheusMeterRegistry registry) {
            return shared(PollingRelay.builder(), producer)
                    .partitions(partitions)
                    .batchSize(batchSize)
                    .afterPublish(afterPublish)
                    .parkPolicy(parkPolicy)
                    .meterRegistry(registry)
                    .build();
        }
    }

    @Command(name = "cdc", mixinStandardHelpOptions = true, showDefaultValues = true,
            description = "The WAL relay: Debezium Embedded reads the outbox table's inserts from a logical replication slot.")
    static final class Cdc extends Sidecar {
        @Option(names = "--slot", defaultValue = "outboxkit_slot", converter = Options.IdentifierConverter.class,
                description = "Logical replication slot (created if missing, never dropped on stop).")
        String slot;

        @Option(names = "--publication", defaultValue = "outboxkit_pub", converter = Options.IdentifierConverter.class,
                description = "Publication on the outbox table (created if missing, or pre-created by an admin).")
        String publication;

        @Override
        String kind() {
            return "cdc";
        }

        @Override
        String source() {
            return " slot " + slot;
        }

        @Override
        Relay relay(Map<String, Object> producer, PrometheusMeterRegistry registry) {
            return shared(CdcRelay.builder(), producer)
                    .slotName(slot)
                    .publicationName(publication)
                    .meterRegistry(registry)
                    .build();
        }
    }

    /** Builder validation failures are configuration errors (exit 2). */
    private static Relay build(java.util.function.Supplier<? extends Relay> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new ConfigurationException(e.getMessage());
        }
    }
}
