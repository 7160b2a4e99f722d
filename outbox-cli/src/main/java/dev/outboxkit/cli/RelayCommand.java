package dev.outboxkit.cli;

import dev.outboxkit.console.Console;
import dev.outboxkit.ops.retention.RetentionSchedule;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.RelayBuilder;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.runtime.DatabaseLogin;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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

    /**
     * The sidecar options that are not relay settings (the relay settings are added from their definitions, see
     * {@link #addRelayOptions}).
     */
    static final class Common {
        @Option(names = "--retention-interval", paramLabel = "DURATION",
                description = "Run the retention job of 'outbox purge' (same windows and options) every DURATION, e.g. PT1H; "
                        + "one sidecar per schema at a time (advisory lock). Default: off (it needs the ledger owner's rights).")
        Duration retentionInterval;

        @Option(names = "--shutdown-deadline", paramLabel = "DURATION", defaultValue = "PT20S",
                description = "After SIGTERM, exit at the latest this long later, whatever the stop still waits for (a database "
                        + "or Kafka that no longer answers): exit 1, the leases then expire after --lease-duration and the batch "
                        + "in flight is published again. Caps the CDC relay's --shutdown-timeout too. Keep it below the "
                        + "orchestrator's grace period (Kubernetes: 30 s by default).")
        Duration shutdownDeadline;

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
    static int serve(String kind, Relay relay, PrometheusMeterRegistry registry, int httpPort, Console console, Duration shutdownDeadline,
                     PrintWriter out, java.util.function.Supplier<SidecarRetention> retentionSetup) throws Exception {
        SidecarRetention retention;
        try {
            retention = retentionSetup.get();
        } catch (RuntimeException e) {
            relay.close();
            throw e;
        }
        Shutdown shutdown = Shutdown.onSignals();
        SidecarServer http = null;
        boolean stopped;
        try {
            if (httpPort >= 0) {
                // before the start, which waits up to --start-timeout for the database: not ready meanwhile, and why
                http = new SidecarServer(httpPort, relay::health, registry, console);
                out.println("relay " + kind + " starting; /health/ready answers 503 until it runs (port "
                        + http.port() + ")");
                out.flush();
            }
            try {
                startStoppable(relay, shutdown);
            } catch (RuntimeException e) {
                if (!shutdown.isRequested()) {
                    throw e;
                }
                log.info("relay {}: stop requested while starting: {}", kind, e.getMessage());
                out.println("relay " + kind + " stopped before it started");
                out.flush();
                return Main.OK;
            }
            if (retention != null) {
                retention.schedule.start();
            }
            out.println("relay " + kind + " started" + (http == null ? "" : "; health and metrics on http://0.0.0.0:" + http.port())
                    + (console == null ? "" : "; console on http://0.0.0.0:" + http.port() + console.basePath() + "/"));
            out.flush();
            shutdown.await();
            log.info("relay {}: stop requested, finishing the batch in flight and releasing leases (at most {})", kind,
                    shutdownDeadline);
        } finally {
            try {
                // the relay first: its handoff is what the other instances wait for; a retention run in progress
                // (a purge of published rows) waits for no one and must not hold the handoff up
                stopped = stopWithin(kind, shutdownDeadline, () -> {
                    try {
                        relay.close();
                    } finally {
                        if (retention != null) {
                            retention.close();
                        }
                    }
                });
            } finally {
                if (http != null) {
                    http.close();
                }
            }
        }
        if (!stopped) {
            out.println("relay " + kind + " did not finish stopping within " + shutdownDeadline + "; exiting anyway");
            out.flush();
            return Main.FAILED;
        }
        out.println("relay " + kind + " stopped");
        out.flush();
        return Main.OK;
    }

    /**
     * {@link Relay#start()}, which may wait up to --start-timeout for the database, ended early by SIGTERM/SIGINT: a
     * signal meanwhile closes the relay from a thread of its own, and the start then throws.
     */
    private static void startStoppable(Relay relay, Shutdown shutdown) {
        java.util.concurrent.atomic.AtomicBoolean starting = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread stopper = new Thread(() -> {
            try {
                while (starting.get()) {
                    if (shutdown.await(100)) {
                        if (starting.get()) {
                            relay.close(); // idempotent: the stop after a start that returned meanwhile finds it closed
                        }
                        return;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "outbox-stop-while-starting");
        stopper.setDaemon(true);
        stopper.start();
        try {
            relay.start();
        } finally {
            starting.set(false);
        }
    }

    /**
     * Runs the graceful stop on a thread of its own and waits at most {@code bound} for it. A relay whose database and
     * Kafka vanished can otherwise wait out every driver, pool and client timeout in turn (over a minute), and the
     * orchestrator kills it anyway; past the bound nothing is lost, since unfinished work is only work not committed.
     *
     * @return false when the stop was still running at the bound (it is left to the exiting JVM)
     */
    private static boolean stopWithin(String kind, Duration bound, Runnable stop) {
        FutureTask<Void> task = new FutureTask<>(stop, null);
        Thread stopper = new Thread(task, "outbox-" + kind + "-stop");
        stopper.setDaemon(true);
        stopper.start();
        try {
            task.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            log.warn("relay {}: the stop did not finish within --shutdown-deadline {} (it waits at {}); exiting without it. "
                    + "Its leases expire after --lease-duration, and the batch in flight, not committed, is published again "
                    + "by the next instance (at least once)", kind, bound, waitingAt(stopper));
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("relay " + kind + ": stopping failed: " + e.getCause(), e.getCause());
        }
    }

    /** The topmost frame of our own code the stop thread is in, for the warning. */
    private static String waitingAt(Thread stopper) {
        StackTraceElement[] stack = stopper.getStackTrace();
        for (StackTraceElement frame : stack) {
            if (frame.getClassName().startsWith("dev.outboxkit.")) {
                return frame.toString();
            }
        }
        return stack.length > 0 ? stack[0].toString() : "an unknown place";
    }

    /** What both relay subcommands share: their options, the builder settings those map to, and serving. */
    abstract static class Sidecar extends Options.DatabaseAndKafka {
        @Mixin
        Options.Http http;
        @Mixin
        Common common;
        @Mixin
        Options.ConsoleOptions console;
        /** The spans' exporter when the OTEL_* variables ask for one, else null (no tracing). */
        private OpenTelemetrySdk tracing;

        /** "poll" or "cdc". */
        abstract String kind();

        /** What the start-up log line says about the source beyond the database. */
        String source() {
            return "";
        }

        /** The relay, from {@link #configured}. */
        abstract Relay relay(Map<String, Object> producer, PrometheusMeterRegistry registry);

        /**
         * The connection options, then every relay option the command line, environment or config file gave (their
         * defaults are the definitions' own, so setting them changes nothing).
         */
        <B extends RelayBuilder<B>> B configured(B builder, Map<String, Object> producer) {
            DatabaseLogin login = db.loginWithUser();
            builder.jdbcUrl(login.jdbcUrl())
                    .user(login.user())
                    .password(login.password())
                    .schema(db.schema)
                    .bootstrapServers(kafka.requireBootstrap())
                    .producerOverrides(producer)
                    .tracing(tracing);
            for (RelayOption<?> option : builder.options()) {
                if (option != RelayOptions.SCHEMA) {
                    Object value = spec.findOption(flag(option)).getValue();
                    if (value != null) {
                        set(builder, option, value);
                    }
                }
            }
            return builder;
        }

        @Override
        public Integer call() throws Exception {
            if (common.shutdownDeadline.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new ConfigurationException("Invalid value for option '--shutdown-deadline': "
                        + common.shutdownDeadline + " is below 1 second (PT1S); give the stop time to release the leases");
            }
            Map<String, Object> producer = kafka.clientProperties(settings, true);
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            tracing = SidecarTracing.fromEnvironment(settings.env(), "outbox-relay-" + kind());
            try {
                Relay relay = build(() -> relay(producer, registry));
                log.info("relay {}: {}{} → {}{}", kind(), db.describe(), source(), kafka.bootstrapServers,
                        tracing == null ? "" : "; exporting spans (OTEL_* environment)");
                Options.ConsoleMount mount;
                try {
                    mount = console.open(db, settings.env(), http.httpPort, relay::health, registry);
                } catch (RuntimeException e) {
                    relay.close();
                    throw e;
                }
                try {
                    return serve(kind(), relay, registry, http.httpPort, mount == null ? null : mount.console(),
                            common.shutdownDeadline, spec.commandLine().getOut(),
                            () -> SidecarRetention.of(common, db, kafka, settings, registry));
                } finally {
                    if (mount != null) {
                        mount.close();
                    }
                }
            } finally {
                // the relay has stopped (or never started): send what is buffered, bounded like the stop
                SidecarTracing.close(tracing, Math.max(1, common.shutdownDeadline.toSeconds() / 4));
            }
        }
    }

    @Command(name = "poll", mixinStandardHelpOptions = true, showDefaultValues = true,
            description = "The polling relay: claims rows with FOR UPDATE SKIP LOCKED, publishes, deletes after the acks.")
    static final class Poll extends Sidecar {
        @Override
        String kind() {
            return "poll";
        }

        @Override
        Relay relay(Map<String, Object> producer, PrometheusMeterRegistry registry) {
            return configured(PollingRelay.builder(), producer).meterRegistry(registry).build();
        }
    }

    @Command(name = "cdc", mixinStandardHelpOptions = true, showDefaultValues = true,
            description = "The CDC relay: Debezium Embedded reads the outbox table's inserts from a logical replication slot.")
    static final class Cdc extends Sidecar {
        @Override
        String kind() {
            return "cdc";
        }

        @Override
        String source() {
            return " slot " + spec.findOption(flag(dev.outboxkit.relay.cdc.CdcOptions.SLOT_NAME)).getValue();
        }

        @Override
        Relay relay(Map<String, Object> producer, PrometheusMeterRegistry registry) {
            return configured(CdcRelay.builder(), producer).meterRegistry(registry).build();
        }
    }

    /**
     * Adds every relay setting to {@code relay poll} and {@code relay cdc} as an option derived from its definition:
     * flag {@code --kebab-name}, its environment variable and config-file key (by {@link Settings}' rule), default,
     * converter with the definition's check, and description. {@code --schema} comes with the database options
     * every command takes; a test keeps its default equal to the definition's.
     */
    static void addRelayOptions(CommandLine root) {
        CommandLine relay = root.getSubcommands().get("relay");
        add(relay.getSubcommands().get("poll").getCommandSpec(), PollingRelay.builder().options());
        add(relay.getSubcommands().get("cdc").getCommandSpec(), CdcRelay.builder().options());
    }

    private static void add(CommandLine.Model.CommandSpec command, List<RelayOption<?>> options) {
        for (RelayOption<?> option : options) {
            if (option != RelayOptions.SCHEMA) {
                command.addOption(optionSpec(option));
            }
        }
    }

    static String flag(RelayOption<?> option) {
        return "--" + option.kebabName();
    }

    private static CommandLine.Model.OptionSpec optionSpec(RelayOption<?> option) {
        CommandLine.Model.OptionSpec.Builder b = CommandLine.Model.OptionSpec.builder(flag(option))
                .type(option.type())
                .paramLabel(paramLabel(option))
                .userObject(option) // the configuration reference reads its group from the definition
                .description(literal(option.description()))
                .converters(text -> {
                    try {
                        return option.parse(text);
                    } catch (IllegalArgumentException e) {
                        throw new CommandLine.TypeConversionException(e.getMessage());
                    }
                });
        if (option.defaultValue() != null) {
            b.defaultValue(literal(option.defaultText()));
        } else if (!option.defaultText().isEmpty()) {
            b.description(literal(option.description() + " Default: " + option.defaultText() + "."));
        }
        if (option.type() == Boolean.class) {
            b.arity("0..1").fallbackValue("true"); // --flag alone means true; --flag=false turns it off
        }
        if (option.type().isEnum()) {
            b.completionCandidates(Arrays.stream(option.type().getEnumConstants()).map(String::valueOf).toList());
        }
        return b.build();
    }

    private static String paramLabel(RelayOption<?> option) {
        Class<?> type = option.type();
        if (type == Duration.class) {
            return "DURATION";
        }
        if (type == Integer.class) {
            return "N";
        }
        if (type == Boolean.class) {
            return "true|false";
        }
        if (type.isEnum()) {
            return String.join("|", Arrays.stream(type.getEnumConstants()).map(String::valueOf).toList());
        }
        return option.kebabName().replace('-', '_').toUpperCase(Locale.ROOT);
    }

    /** Picocli expands ${…} in descriptions and defaults; the definitions mean them literally. */
    private static String literal(String text) {
        return text.replace("${", "$${").replace("%", "%%");
    }

    @SuppressWarnings("unchecked")
    private static <T> void set(RelayBuilder<?> builder, RelayOption<T> option, Object value) {
        builder.set(option, (T) value);
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
