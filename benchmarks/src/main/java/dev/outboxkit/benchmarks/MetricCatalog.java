package dev.outboxkit.benchmarks;

import dev.outboxkit.benchmarks.load.CpuBudget;
import java.util.List;
import java.util.Map;

/**
 * The keys {@code latest.json} always lists, with units, meanings and the targets of
 * the relays, the writer and the consumer; which module each key still waits for; and the ratios
 * the runner derives from two keys of the same repeat.
 *
 * <p>A key listed here that no registered scenario produces is written as {@code null}, with
 * {@link #PENDING}'s reason under {@code "missing"}. Registering a scenario that declares the
 * key (in {@link Scenario#metrics()}) is all it takes to fill it.
 */
public final class MetricCatalog {

    private MetricCatalog() {
    }

    public static final Metric PG_DRAIN_CEILING_EPS = Metric.of("pg_drain_ceiling_eps", "events/s",
            "PostgreSQL alone: one claim/delete loop (DELETE … FOR UPDATE SKIP LOCKED LIMIT 1000 RETURNING the contract columns) draining a pre-filled backlog");
    public static final Metric KAFKA_PRODUCE_CEILING_EPS = Metric.of("kafka_produce_ceiling_eps", "events/s",
            "Kafka alone: one producer with the relays' settings (ProducerSafety) sending the records KafkaRecords makes from backlog rows, acks counted");
    public static final Metric POLLER_DRAIN_EPS = Metric.of("poller_drain_eps", "events/s",
            "polling relay with its defaults (two claim loops) draining the same backlog into Kafka, every ack waited for");
    public static final Metric POLLER_VS_PG_CEILING = Metric.of("poller_vs_pg_ceiling", "ratio",
            "poller_drain_eps ÷ pg_drain_ceiling_eps, same repeat").atLeast(0.9).headline();
    public static final Metric CDC_DRAIN_EPS = Metric.of("cdc_drain_eps", "events/s",
            "CDC relay (Debezium Embedded, pgoutput) streaming the backlog into Kafka");
    public static final Metric DEBEZIUM_CEILING_EPS = Metric.of("debezium_ceiling_eps", "events/s",
            "Debezium Embedded alone: the CDC relay's connector settings, a handler that only marks records processed (no decoding, no Kafka)");
    public static final Metric CDC_VS_DEBEZIUM_CEILING = Metric.of("cdc_vs_debezium_ceiling", "ratio",
            "cdc_drain_eps ÷ debezium_ceiling_eps, same repeat").atLeast(0.9).headline();
    public static final Metric STOCK_DEBEZIUM_EPS = Metric.of("stock_debezium_eps", "events/s",
            "stock pipeline: Debezium Embedded + EventRouter SMT + JSON converter + send-and-wait, as Debezium's docs show it");
    public static final Metric CDC_VS_STOCK_DEBEZIUM = Metric.of("cdc_vs_stock_debezium", "ratio",
            "cdc_drain_eps ÷ stock_debezium_eps, same repeat");
    public static final Metric WRITER_TAX_RATIO = Metric.of("writer_tax_ratio", "ratio",
            "transfers/s with one outbox event ÷ without, 8 clients, same repeat").atLeast(0.85);
    public static final Metric CONSUMER_DEDUPE_RATIO = Metric.of("consumer_dedupe_ratio", "ratio",
            "consumer events/s with the inbox ÷ the same handler without it, same repeat").atLeast(0.85);
    public static final Metric CONSUMER_EPS = Metric.of("consumer_eps", "events/s",
            "idempotent consumer with a one-row-update handler, inbox on");
    public static final Metric POLLER_P50_MS_AT_200 = latency("poller", "p50", 200);
    public static final Metric POLLER_P99_MS_AT_200 = latency("poller", "p99", 200).atMost(10);
    public static final Metric CDC_P50_MS_AT_200 = latency("cdc", "p50", 200);
    public static final Metric CDC_P99_MS_AT_200 = latency("cdc", "p99", 200).atMost(25);
    public static final Metric POLLER_P99_MS_AT_5000 = latency("poller", "p99", 5000);
    public static final Metric CDC_P99_MS_AT_5000 = latency("cdc", "p99", 5000);
    /** The system key of the dual-write latency floor ({@code dual_write_latency_floor}). */
    public static final String DUAL_WRITE = "dual_write";
    public static final Metric POLLER_P99_VS_DUAL_WRITE_AT_5000 = p99VsDualWrite("poller", 5000).atMost(1.5).headline();
    public static final Metric CDC_P99_VS_DUAL_WRITE_AT_5000 = p99VsDualWrite("cdc", 5000).atMost(2.0).headline();
    public static final Metric POLLER_P99_VS_DUAL_WRITE_AT_200 = p99VsDualWrite("poller", 200).atMost(1.2).headline();
    public static final Metric CDC_P99_VS_DUAL_WRITE_AT_200 = p99VsDualWrite("cdc", 200).atMost(1.2).headline();
    public static final Metric RELAY_RSS_MB = Metric.of("relay_rss_mb", "MB",
            "peak resident memory (VmHWM) of a relay's JVM while it drains the backlog").atMost(128).headline();
    public static final Metric NOTIFY_COMMIT_RATIO = Metric.of("notify_commit_ratio", "ratio",
            "writer commits/s with a pg_notify in each transaction ÷ without, 8 clients, same repeat");

    public static final Metric POLLER_TRACING_DRAIN_RATIO = Metric.of("poller_tracing_drain_ratio", "ratio",
            "polling relay drain events/s with a PRODUCER span per event ÷ without tracing, same repeat");

    /** Numerators and denominators of the derived ratios that scenarios still have to produce. */
    public static final Metric WRITER_OUTBOX_TPS = Metric.of("writer_outbox_tps", "transfers/s",
            "transfers/s with one outbox event each, 8 clients (the writer scenario)");
    public static final Metric WRITER_BASELINE_TPS = Metric.of("writer_baseline_tps", "transfers/s",
            "transfers/s without an outbox, 8 clients: two account updates and a commit per transfer");
    public static final Metric CONSUMER_PLAIN_EPS = Metric.of("consumer_plain_eps", "events/s",
            "the consumer's handler without the inbox (the consumer scenario)");

    // Peers side by side: the Spring Modulith peer measured like outboxkit, and the same crash for all.
    public static final Metric MODULITH_DRAIN_EPS = Metric.of("modulith_drain_eps", "events/s",
            "Spring Modulith (JDBC event publication registry + Kafka externalization) publishing the same backlog:"
                    + " incomplete publications resubmitted, until Kafka holds every event");
    public static final Metric POLLER_VS_MODULITH_DRAIN = Metric.of("poller_vs_modulith_drain", "ratio",
            "poller_drain_eps ÷ modulith_drain_eps, same repeat");
    public static final Metric MODULITH_P50_MS_AT_200 = latency("modulith", "p50", 200);
    public static final Metric MODULITH_P99_MS_AT_200 = latency("modulith", "p99", 200);
    public static final Metric MODULITH_P99_MS_AT_5000 = latency("modulith", "p99", 5000);
    public static final Metric MODULITH_WRITER_TAX_RATIO = Metric.of("modulith_writer_tax_ratio", "ratio",
            "Spring Modulith: transfers/s publishing one event ÷ without, 8 clients, same Spring transactions, same repeat");
    public static final Metric MODULITH_WRITER_BASELINE_TPS = Metric.of("modulith_writer_baseline_tps", "transfers/s",
            "the Spring Modulith peer's @Transactional transfers without an event, 8 clients");
    public static final Metric MODULITH_WRITER_EVENT_TPS = Metric.of("modulith_writer_event_tps", "transfers/s",
            "the same transfers publishing one event each (registry row in the transaction), 8 clients");
    // The namastack-outbox peer, measured like the Spring Modulith peer.
    public static final Metric NAMASTACK_DRAIN_EPS = Metric.of("namastack_drain_eps", "events/s",
            "namastack-outbox (JDBC store + a handler sending to Kafka and waiting for the ack) publishing the same"
                    + " backlog: records committed in one transaction, until Kafka holds every event");
    public static final Metric POLLER_VS_NAMASTACK_DRAIN = Metric.of("poller_vs_namastack_drain", "ratio",
            "poller_drain_eps ÷ namastack_drain_eps, same repeat");
    public static final Metric NAMASTACK_P50_MS_AT_200 = latency("namastack", "p50", 200);
    public static final Metric NAMASTACK_P99_MS_AT_200 = latency("namastack", "p99", 200);
    public static final Metric NAMASTACK_P99_MS_AT_5000 = latency("namastack", "p99", 5000);
    public static final Metric NAMASTACK_WRITER_TAX_RATIO = Metric.of("namastack_writer_tax_ratio", "ratio",
            "namastack-outbox: transfers/s scheduling one record ÷ without, 8 clients, same Spring transactions, same"
                    + " repeat");
    public static final Metric NAMASTACK_WRITER_BASELINE_TPS = Metric.of("namastack_writer_baseline_tps",
            "transfers/s", "the namastack-outbox peer's @Transactional transfers without a record, 8 clients");
    public static final Metric NAMASTACK_WRITER_EVENT_TPS = Metric.of("namastack_writer_event_tps", "transfers/s",
            "the same transfers scheduling one record each (outbox_record row in the transaction), 8 clients");

    /**
     * The CPU budget of a drain ({@code load.CpuBudget}), measured over its timed part: CPU microseconds per
     * drained event for each part, {@code <system>_cpu_us_per_event_<part>}, and how busy the machine was,
     * {@code <system>_cpu_busy} (all of it) and {@code <system>_cpu_busy_others} (processes other than the
     * PostgreSQL server and the benchmark JVM). {@code drain} names the drain in the meanings.
     */
    public static List<Metric> cpuBudget(String system, String drain) {
        List<Metric> metrics = new java.util.ArrayList<>();
        for (CpuBudget.Part part : CpuBudget.Part.values()) {
            metrics.add(Metric.of(cpuPerEventKey(system, part), "µs/event",
                    "CPU (user + system) per event during " + drain + ": " + cpuPart(part)));
        }
        metrics.add(Metric.of(cpuBusyKey(system), "ratio", "the machine's busy CPU ÷ (CPUs × wall time) during "
                + drain + ", from /proc/stat (0..1, everything running, steal included)"));
        metrics.add(Metric.of(cpuBusyOthersKey(system), "ratio", "the part of " + cpuBusyKey(system) + " that neither"
                + " the PostgreSQL server nor the benchmark JVM used (other processes on the machine)"));
        return List.copyOf(metrics);
    }

    public static String cpuPerEventKey(String system, CpuBudget.Part part) {
        return system + "_cpu_us_per_event_" + part.key();
    }

    public static String cpuBusyKey(String system) {
        return system + "_cpu_busy";
    }

    public static String cpuBusyOthersKey(String system) {
        return system + "_cpu_busy_others";
    }

    private static String cpuPart(CpuBudget.Part part) {
        return switch (part) {
            case POSTGRES -> "the embedded PostgreSQL server, postmaster and all its children (backends, walsender, "
                    + "walwriter, checkpointer …, exited ones included)";
            case KAFKA -> "the in-JVM Kafka broker's threads (by name)";
            case PRODUCER -> "the Kafka producers' sender threads (kafka-producer-network-thread)";
            case DEBEZIUM -> "Debezium's connector threads (debezium-…: the WAL reader and decoder, keep-alive, LSN flush)";
            case CLIENT -> "every other thread of the benchmark JVM: the relay's own, the Debezium engine thread "
                    + "(converters, handler), JDBC, the benchmark's waiting";
            case GC -> "the benchmark JVM's garbage collector threads (GC Thread#N, G1 …)";
            case JIT -> "the benchmark JVM's JIT compiler threads (C1/C2 CompilerThread)";
            case JVM -> "the rest of the benchmark JVM's CPU: the VM thread (safepoints), other VM threads, and threads"
                    + " that ended in the window";
        };
    }

    /** The systems the crash runs kill, in report order. */
    public static final List<String> CRASH_SYSTEMS = List.of("poller", "cdc", "modulith", "namastack");

    /** The crash keys of one system ({@code <system>_crash_lost}, ...). */
    public static List<Metric> crash(String system) {
        String label = systemLabel(system);
        return List.of(
                Metric.of(system + "_crash_committed", "events", "events committed before the SIGKILL of "
                        + label + "'s publishing process"),
                Metric.of(system + "_crash_lost", "events", "committed events Kafka never got after the SIGKILL and"
                        + " a restart of " + label + "'s publishing process (testkit History)"),
                Metric.of(system + "_crash_duplicates", "events", "extra deliveries (an event in Kafka more than"
                        + " once) after the SIGKILL and restart of " + label + "'s publishing process"),
                Metric.of(system + "_crash_order_violations", "events", "first deliveries out of commit order within"
                        + " their aggregate after the SIGKILL and restart of " + label + "'s publishing process"));
    }

    /** The relays the failover scenario kills, in report order. */
    public static final List<String> FAILOVER_SYSTEMS = List.of("poller", "cdc");

    /**
     * The failover keys of one relay: {@code failover_<system>_kill_first_ack_p50_ms} … over the kills
     * (SIGKILL) and the SIGTERM handoffs of one run, with their targets: the survivor's first acknowledged
     * record of the killed instance's work within 1 s (polling relay) or 3 s (CDC relay), a SIGTERM handoff's worst
     * event delay within 250 ms.
     */
    public static List<Metric> failover(String system) {
        String label = systemLabel(system);
        double killBar = system.equals("cdc") ? 3_000 : 1_000;
        List<Metric> metrics = new java.util.ArrayList<>();
        for (String stat : List.of("p50", "max")) {
            metrics.add(Metric.of(failoverKey(system, "kill_first_ack", stat), "ms", stat + " over the kills: SIGKILL of"
                    + " the instance of " + label + " holding the work → the survivor's first acknowledged record of"
                    + " that work (its Kafka timestamp)").atMost(killBar));
        }
        for (String stat : List.of("p50", "max")) {
            metrics.add(Metric.of(failoverKey(system, "kill_worst_delay", stat), "ms", stat + " over the kills: the"
                    + " worst delay (Kafka timestamp − createdAt) of the events created from 1 s before the SIGKILL until"
                    + " that first record, " + label));
        }
        for (String stat : List.of("p50", "max")) {
            metrics.add(Metric.of(failoverKey(system, "sigterm_first_ack", stat), "ms", stat + " over the SIGTERM"
                    + " handoffs: SIGTERM of the instance of " + label + " holding the work → the successor's first"
                    + " acknowledged record of that work"));
        }
        for (String stat : List.of("p50", "max")) {
            metrics.add(Metric.of(failoverKey(system, "sigterm_worst_delay", stat), "ms", stat + " over the SIGTERM"
                    + " handoffs: the worst delay (Kafka timestamp − createdAt) of the events created from 1 s before"
                    + " the SIGTERM until the successor's first record, " + label).atMost(250));
        }
        return List.copyOf(metrics);
    }

    /** {@code failover_<system>_<what>_<stat>_ms}. */
    public static String failoverKey(String system, String what, String stat) {
        return "failover_" + system + "_" + what + "_" + stat + "_ms";
    }

    /**
     * The p50 and p99 keys of a latency floor at every rate ({@code <system>_p50_ms_at_<rate>} …), each meaning
     * "{@code <percentile> <what> at <rate> events/s offered (<why>)}".
     */
    public static List<Metric> latencyFloor(String system, String what, String why) {
        List<Metric> metrics = new java.util.ArrayList<>();
        for (int rate : Sizes.LATENCY_RATES) {
            for (String p : List.of("p50", "p99")) {
                metrics.add(Metric.of(LatencyProfile.key(system, p, rate), "ms",
                        p + " " + what + " at " + rate + " events/s offered (" + why + ")"));
            }
        }
        return List.copyOf(metrics);
    }

    /** What a system key stands for in a sentence. */
    public static String systemLabel(String system) {
        return switch (system) {
            case "poller" -> "the polling relay";
            case "cdc" -> "the CDC relay";
            case "modulith" -> "the Spring Modulith peer";
            case "namastack" -> "the namastack-outbox peer";
            case DUAL_WRITE -> "a dual write (the writer sends after its commit; no relay)";
            default -> system;
        };
    }

    /** Every key the report lists even when nothing measured it, in report order. */
    public static final List<Metric> REQUIRED = List.of(
            PG_DRAIN_CEILING_EPS, KAFKA_PRODUCE_CEILING_EPS, POLLER_DRAIN_EPS, POLLER_VS_PG_CEILING,
            CDC_DRAIN_EPS, DEBEZIUM_CEILING_EPS, CDC_VS_DEBEZIUM_CEILING, STOCK_DEBEZIUM_EPS, CDC_VS_STOCK_DEBEZIUM,
            WRITER_TAX_RATIO, CONSUMER_DEDUPE_RATIO,
            CONSUMER_EPS, POLLER_P50_MS_AT_200, POLLER_P99_MS_AT_200, CDC_P50_MS_AT_200, CDC_P99_MS_AT_200,
            POLLER_P99_MS_AT_5000, POLLER_P99_VS_DUAL_WRITE_AT_5000, CDC_P99_MS_AT_5000, CDC_P99_VS_DUAL_WRITE_AT_5000,
            POLLER_P99_VS_DUAL_WRITE_AT_200, CDC_P99_VS_DUAL_WRITE_AT_200, RELAY_RSS_MB,
            NOTIFY_COMMIT_RATIO, POLLER_TRACING_DRAIN_RATIO,
            MODULITH_DRAIN_EPS, POLLER_VS_MODULITH_DRAIN, MODULITH_P50_MS_AT_200, MODULITH_P99_MS_AT_200,
            MODULITH_P99_MS_AT_5000, MODULITH_WRITER_TAX_RATIO,
            NAMASTACK_DRAIN_EPS, POLLER_VS_NAMASTACK_DRAIN, NAMASTACK_P50_MS_AT_200, NAMASTACK_P99_MS_AT_200,
            NAMASTACK_P99_MS_AT_5000, NAMASTACK_WRITER_TAX_RATIO);

    /** {@link #REQUIRED}, every system's crash keys and every relay's failover keys. */
    public static List<Metric> required() {
        List<Metric> all = new java.util.ArrayList<>(REQUIRED);
        CRASH_SYSTEMS.forEach(system -> all.addAll(crash(system)));
        FAILOVER_SYSTEMS.forEach(system -> all.addAll(failover(system)));
        return List.copyOf(all);
    }

    /** A ratio the runner computes per repeat from two keys of that repeat, then takes the median of. */
    public record Ratio(Metric metric, String numerator, String denominator) {
    }

    public static final List<Ratio> RATIOS = List.of(
            new Ratio(POLLER_VS_PG_CEILING, POLLER_DRAIN_EPS.key(), PG_DRAIN_CEILING_EPS.key()),
            new Ratio(CDC_VS_DEBEZIUM_CEILING, CDC_DRAIN_EPS.key(), DEBEZIUM_CEILING_EPS.key()),
            new Ratio(CDC_VS_STOCK_DEBEZIUM, CDC_DRAIN_EPS.key(), STOCK_DEBEZIUM_EPS.key()),
            new Ratio(WRITER_TAX_RATIO, WRITER_OUTBOX_TPS.key(), WRITER_BASELINE_TPS.key()),
            new Ratio(CONSUMER_DEDUPE_RATIO, CONSUMER_EPS.key(), CONSUMER_PLAIN_EPS.key()),
            new Ratio(POLLER_VS_MODULITH_DRAIN, POLLER_DRAIN_EPS.key(), MODULITH_DRAIN_EPS.key()),
            overDualWrite(POLLER_P99_VS_DUAL_WRITE_AT_5000, "poller", 5000),
            overDualWrite(CDC_P99_VS_DUAL_WRITE_AT_5000, "cdc", 5000),
            overDualWrite(POLLER_P99_VS_DUAL_WRITE_AT_200, "poller", 200),
            overDualWrite(CDC_P99_VS_DUAL_WRITE_AT_200, "cdc", 200),
            new Ratio(MODULITH_WRITER_TAX_RATIO, MODULITH_WRITER_EVENT_TPS.key(), MODULITH_WRITER_BASELINE_TPS.key()),
            new Ratio(POLLER_VS_NAMASTACK_DRAIN, POLLER_DRAIN_EPS.key(), NAMASTACK_DRAIN_EPS.key()),
            new Ratio(NAMASTACK_WRITER_TAX_RATIO, NAMASTACK_WRITER_EVENT_TPS.key(),
                    NAMASTACK_WRITER_BASELINE_TPS.key()));

    /**
     * The keys whose scenarios run {@link Sizes#headlineRepeats()} times: every headline figure ({@link
     * Metric#headline()}) of {@link #required()}, or for a ratio its numerator and denominator.
     */
    public static java.util.Set<String> headlineInputs() {
        java.util.Set<String> keys = new java.util.LinkedHashSet<>();
        for (Metric metric : required()) {
            if (metric.isHeadline()) {
                RATIOS.stream().filter(r -> r.metric().key().equals(metric.key())).findFirst().ifPresentOrElse(
                        r -> keys.addAll(List.of(r.numerator(), r.denominator())), () -> keys.add(metric.key()));
            }
        }
        return java.util.Collections.unmodifiableSet(keys);
    }

    /**
     * Why a key has no scenario yet, by key: the extension point for a key added to {@link #REQUIRED}
     * before its scenario exists (the report then shows the reason instead of a number). Empty while
     * every required key has its scenario.
     */
    public static final Map<String, String> PENDING = Map.of();

    /** {@code <system>_p99_vs_dual_write_at_<rate>}: a relay's p99 against the dual write's, same rate, same repeat. */
    private static Metric p99VsDualWrite(String system, int rate) {
        return Metric.of(system + "_p99_vs_dual_write_at_" + rate, "ratio", LatencyProfile.key(system, "p99", rate)
                + " ÷ " + LatencyProfile.key(DUAL_WRITE, "p99", rate) + ", same repeat: " + systemLabel(system)
                + "'s p99 against writers that send their own records right after their commits, under the same write"
                + " load (1: the relay adds nothing to the machine's own floor)");
    }

    private static Ratio overDualWrite(Metric ratio, String system, int rate) {
        return new Ratio(ratio, LatencyProfile.key(system, "p99", rate), LatencyProfile.key(DUAL_WRITE, "p99", rate));
    }

    private static Metric latency(String system, String percentile, int rate) {
        return Metric.of(LatencyProfile.key(system, percentile, rate), "ms",
                percentile + " commit→ack through " + systemLabel(system) + " at " + rate + " events/s offered (open loop)");
    }
}
