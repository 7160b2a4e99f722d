package dev.outboxkit.ops.retention;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link Retention} job every {@code interval} on one daemon thread, for instance inside
 * every relay sidecar ({@code outbox relay … --retention-interval PT1H}).
 * <p>
 * Several instances run side by side against one schema; only one runs a round at a time: a
 * round starts by trying the schema's retention lock (the one {@code outbox purge} takes too; on
 * a connection of the job's outbox database pool, held for the round) and an instance that does not get
 * it skips the round quietly (DEBUG). If that connection dies the server releases the lock and
 * another instance may start a round while the first one's last statement finishes: harmless,
 * since every step of a purge is idempotent and chunked — the lock saves work and noise, safety
 * comes from each store's own rule.
 * <p>
 * A failing round never throws out of the schedule: it logs one WARN (what failed, on which
 * schema, a likely fix), counts {@code outbox.retention.runs{outcome=failure}}, and the next round
 * runs on time. It touches nothing the relay's health depends on.
 * <p>
 * Each round that runs leaves its entry in the operations journal ({@code outbox_ops_journal}) with the schedule's
 * {@code interval}, so a reader without this schedule in its process (the console on its own) can say when the next
 * round is due; a skipped round leaves none.
 */
public final class RetentionSchedule implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RetentionSchedule.class);

    /** What one round did. */
    public enum Outcome {
        /** The job ran and finished. */
        SUCCESS,
        /** The job ran and failed (logged at WARN). */
        FAILURE,
        /** Another instance holds the schema's retention lock: nothing was done. */
        SKIPPED
    }

    private final Retention retention;
    private final Duration interval;
    private final Duration initialDelay;
    private final Clock clock;
    private final Instant started;
    private final AtomicReference<Instant> lastSuccess = new AtomicReference<>();
    private final Timer succeeded;
    private final Timer failed;
    private final Counter skipped;
    private final MeterRegistry registry;
    private final Object lifecycle = new Object();
    private ScheduledExecutorService executor;

    private RetentionSchedule(Builder b) {
        this.retention = b.retention;
        this.interval = b.interval;
        this.initialDelay = b.initialDelay != null ? b.initialDelay
                : (interval.compareTo(Duration.ofMinutes(1)) < 0 ? interval : Duration.ofMinutes(1));
        this.clock = b.clock;
        this.started = clock.instant();
        this.registry = b.registry != null ? b.registry : retention.registry();
        Counter.Builder runs = Counter.builder("outbox.retention.runs").description("Retention rounds, by outcome");
        runs.tag("outcome", "success").register(registry);
        runs.tag("outcome", "failure").register(registry);
        this.skipped = runs.tag("outcome", "skipped").register(registry);
        Timer.Builder duration = Timer.builder("outbox.retention.duration").description("Wall time of retention rounds that ran");
        this.succeeded = duration.tag("outcome", "success").register(registry);
        this.failed = duration.tag("outcome", "failure").register(registry);
        Gauge.builder("outbox.retention.since_last_success", this, RetentionSchedule::secondsSinceLastSuccess)
                .description("Seconds since the last successful retention round of this instance (since its start before the first)")
                .baseUnit("seconds").register(registry);
    }

    public static Builder builder() {
        return new Builder();
    }

    private double secondsSinceLastSuccess() {
        Instant last = lastSuccess.get();
        return Duration.between(last == null ? started : last, clock.instant()).toMillis() / 1000.0;
    }

    /** Starts the schedule: the first round after the initial delay, then one {@code interval} after each round ends. */
    public void start() {
        synchronized (lifecycle) {
            if (executor != null) {
                throw new IllegalStateException("retention schedule already started");
            }
            executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "outboxkit-retention-" + retention.schema());
                t.setDaemon(true);
                return t;
            });
            executor.scheduleWithFixedDelay(this::runOnce, initialDelay.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        }
        log.info("retention on schema {}: every {} (first round in {}), one instance per schema at a time", retention.schema(),
                interval, initialDelay);
    }

    /** One round now, on the caller's thread; never throws for a failing job (see {@link Outcome}). */
    public Outcome runOnce() {
        String schema = retention.schema();
        long t0 = System.nanoTime();
        try (Connection c = retention.outboxDatabase().getConnection(); RetentionLock lock = RetentionLock.tryAcquire(c, schema)) {
            if (lock == null) {
                skipped.increment();
                log.debug("retention on schema {}: another instance runs this round", schema);
                return Outcome.SKIPPED;
            }
            Retention.Result r = retention.purge(false, interval);
            succeeded.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            count("success");
            lastSuccess.set(clock.instant());
            log(r);
            return Outcome.SUCCESS;
        } catch (Exception e) {
            failed.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            count("failure");
            log.warn("retention on schema {} failed: {}. Nothing else stops (a relay in this process keeps publishing); the next round runs in {}. {}", schema,
                    describe(e), interval, hint(e));
            log.debug("retention failure", e);
            return Outcome.FAILURE;
        }
    }

    private void count(String outcome) {
        registry.counter("outbox.retention.runs", "outcome", outcome).increment();
    }

    private void log(Retention.Result r) {
        long processed = r.processedEvents().values().stream().mapToLong(p -> p.purged()).sum();
        long total = r.intents().dropped().size() + r.intents().defaultRowsDeleted() + processed
                + Math.max(r.idempotencyKeys(), 0) + r.deadLetters() + r.archivedEvents();
        if (total == 0 && r.partitionsCreated() == 0) {
            log.debug("retention on schema {}: nothing to purge", retention.schema());
            return;
        }
        log.info("retention on schema {}: dropped intent partitions {}, intent rows {}, processed_event {}, idempotency keys {},"
                        + " dead letters {}, archived events {}; created {} partition(s) ahead", retention.schema(),
                r.intents().dropped(), r.intents().defaultRowsDeleted(), processed, Math.max(r.idempotencyKeys(), 0),
                r.deadLetters(), r.archivedEvents(), r.partitionsCreated());
    }

    private static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder(e.getClass().getSimpleName()).append(": ").append(e.getMessage());
        if (e.getCause() != null && e.getCause().getMessage() != null && !sb.toString().contains(e.getCause().getMessage())) {
            sb.append(" (caused by ").append(e.getCause().getClass().getSimpleName()).append(": ")
                    .append(e.getCause().getMessage()).append(')');
        }
        return dev.outboxkit.core.Secret.maskUrl(sb.toString());
    }

    /** The likely fix, from the SQLSTATE where there is one. */
    private static String hint(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException s && s.getSQLState() != null) {
                return switch (s.getSQLState()) {
                    case "42501" -> "Fix: the database role lacks a right retention needs (it must own outbox_intent to create and"
                            + " drop its partitions, and may DELETE from the purged tables): see 'Least-privilege grants' in the"
                            + " README, or run retention from a role that has them.";
                    case "55P03" -> "A long transaction holds a lock on the intent ledger; the next round tries again.";
                    case "42P01", "42883" -> "Fix: a table or function is missing: run 'outbox migrate' on this schema (and on the"
                            + " consumer database for processed_event).";
                    default -> s.getSQLState().startsWith("08")
                            ? "The database is unreachable; check --jdbc-url / --consumer-jdbc-url. The next round tries again."
                            : "Run 'outbox purge --dry-run' with the same options to see the failure in full.";
                };
            }
        }
        if (e instanceof IllegalStateException && String.valueOf(e.getMessage()).contains("consumer group")) {
            return "Fix: Kafka is unreachable or refused the offsets query; check --bootstrap-servers and the kafka.* settings"
                    + " (processed_event is never purged without the group's committed offsets).";
        }
        return "Run 'outbox purge --dry-run' with the same options to see the failure in full.";
    }

    /** Stops the schedule; a round in flight gets up to 30 s to finish. Idempotent. */
    @Override
    public void close() {
        ScheduledExecutorService running;
        synchronized (lifecycle) {
            running = executor;
            executor = null;
        }
        if (running == null) {
            return;
        }
        running.shutdown();
        try {
            if (!running.awaitTermination(30, TimeUnit.SECONDS)) {
                log.warn("retention on schema {}: a round is still running after 30 s; it is abandoned (every step is"
                        + " idempotent, the next round finishes the work)", retention.schema());
                running.shutdownNow();
            }
        } catch (InterruptedException e) {
            running.shutdownNow();
            Thread.currentThread().interrupt();
        }
        log.info("retention on schema {}: schedule stopped", retention.schema());
    }

    /** Configuration; {@link #build()} validates it. */
    public static final class Builder {
        private Retention retention;
        private Duration interval;
        private Duration initialDelay;
        private Clock clock = Clock.systemUTC();
        private MeterRegistry registry;

        private Builder() {
        }

        /**
         * The job to run. Required. Its outbox database DataSource also serves the lock: give its pool at
         * least two connections (the lock's and the job's).
         */
        public Builder retention(Retention retention) {
            this.retention = retention;
            return this;
        }

        /** Pause between the end of one round and the start of the next. Required, at least 1 second; an hour is plenty. */
        public Builder interval(Duration interval) {
            this.interval = interval;
            return this;
        }

        /**
         * Delay before the first round. Default: the interval, at most one minute (so a restarted
         * instance catches up soon; the lock keeps a fleet restarting at once to one round).
         */
        public Builder initialDelay(Duration initialDelay) {
            this.initialDelay = initialDelay;
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Where outbox.retention.runs, .duration and .since_last_success go. Default: the Retention's registry. */
        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = registry;
            return this;
        }

        public RetentionSchedule build() {
            Objects.requireNonNull(retention, "retention is required");
            if (interval == null || interval.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("interval must be at least 1 second, got " + interval);
            }
            if (initialDelay != null && initialDelay.isNegative()) {
                throw new IllegalArgumentException("initialDelay must not be negative, got " + initialDelay);
            }
            Objects.requireNonNull(clock, "clock");
            return new RetentionSchedule(this);
        }
    }
}
