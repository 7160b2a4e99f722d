package dev.outboxkit.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.ops.reconcile.ConsumerSource;
import dev.outboxkit.ops.reconcile.Finding;
import dev.outboxkit.ops.reconcile.Reconciler;
import dev.outboxkit.ops.reconcile.Report;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "reconcile", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = {"Compare the outbox database's intent ledger with the consumers' effects over a bounded window: lost, "
                + "phantom, duplicate, late and unknown-outcome events.",
                "Exit status 3 when anything is found (for cron or a Kubernetes CronJob), 0 when clean."})
final class ReconcileCommand implements Callable<Integer> {

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    Options.Database db;

    @Option(names = "--consumer", paramLabel = "NAME=URL", showDefaultValue = CommandLine.Help.Visibility.NEVER,
            description = "A consumer database holding processed_event / external_effect (repeatable); "
                    + "default: the outbox database (--jdbc-url), named local.")
    Map<String, String> consumers = new LinkedHashMap<>();

    @Option(names = "--consumer-schema", paramLabel = "NAME", converter = Options.SchemaConverter.class,
            description = "Schema of the consumer tables; default: --schema.")
    String consumerSchema;

    @Option(names = "--group", paramLabel = "GROUP", required = true,
            description = "Consumer group to check in every consumer database (repeatable).")
    List<String> groups;

    @Option(names = "--aggregate-type", paramLabel = "TYPE",
            description = "Only intents of these aggregate types are expected to have effects (repeatable); default: all.")
    List<String> aggregateTypes = new ArrayList<>();

    @Option(names = "--lookback", paramLabel = "DURATION", defaultValue = "PT24H",
            description = "Window scanned (ISO-8601); keep it below the processed_event retention.")
    Duration lookback;

    @Option(names = "--grace", paramLabel = "DURATION", defaultValue = "PT15M",
            description = "Age after which an intent without effect is reported lost.")
    Duration grace;

    @Option(names = "--dedupe-window", paramLabel = "DURATION", defaultValue = "P7D",
            description = "The consumers' processed_event retention: later effects are late arrivals.")
    Duration dedupeWindow;

    @Option(names = "--batch-size", defaultValue = "10000", description = "Intents per fetch and per copy.")
    int batchSize;

    @Option(names = "--max-findings", defaultValue = "100", description = "Findings listed per kind (counts stay exact).")
    int maxFindings;

    @Option(names = "--json", description = "Print JSON instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        List<HikariDataSource> pools = new ArrayList<>();
        try {
            HikariDataSource outboxDatabase = db.dataSource("outbox-reconcile", 2);
            pools.add(outboxDatabase);
            String schema = consumerSchema == null ? db.schema : consumerSchema;
            Reconciler.Builder builder = Reconciler.builder().outboxDatabase(outboxDatabase, db.schema).lookback(lookback).grace(grace)
                    .dedupeWindow(dedupeWindow).batchSize(batchSize).maxFindingsPerKind(maxFindings)
                    .actor(DeadLettersCommand.operator());
            if (consumers.isEmpty()) {
                builder.consumer(new ConsumerSource("local", outboxDatabase, schema, groups, new LinkedHashSet<>(aggregateTypes)));
            }
            for (Map.Entry<String, String> e : consumers.entrySet()) {
                if (!e.getValue().startsWith("jdbc:postgresql:")) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "Invalid value for option '--consumer': "
                            + e.getKey() + "=" + dev.outboxkit.core.Secret.maskUrl(e.getValue()) + " is not NAME=jdbc:postgresql:…");
                }
                HikariDataSource pool = db.pool(e.getValue(), "outbox-reconcile-" + e.getKey(), 1);
                pools.add(pool);
                builder.consumer(new ConsumerSource(e.getKey(), pool, schema, groups, new LinkedHashSet<>(aggregateTypes)));
            }
            Reconciler reconciler;
            try {
                reconciler = builder.build();
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException(e.getMessage());
            }
            Report report;
            try {
                report = reconciler.run();
            } catch (IllegalStateException e) {
                throw new ConfigurationException(e.getMessage()); // the ledger is switched off
            }
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(toJson(report)));
            } else {
                print(out, report);
            }
            return report.clean() ? Main.OK : Main.FOUND;
        } finally {
            pools.forEach(HikariDataSource::close);
        }
    }

    static Map<String, Object> toJson(Report r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("since", r.since().toString());
        m.put("until", r.until().toString());
        m.put("intents", r.intents());
        m.put("tookMillis", r.took().toMillis());
        Map<String, Long> counts = new LinkedHashMap<>();
        r.counts().forEach((k, v) -> counts.put(k.name(), v));
        m.put("counts", counts);
        m.put("findings", r.findings());
        m.put("clean", r.clean());
        return m;
    }

    private static void print(PrintWriter out, Report r) {
        out.printf("window %s .. %s, %d intents scanned in %d ms%n", r.since(), r.until(), r.intents(), r.took().toMillis());
        r.counts().forEach((k, v) -> out.printf("  %-18s %d%n", k, v));
        if (r.clean()) {
            out.println("clean: nothing found");
            return;
        }
        out.printf("%n%-18s %-22s %-45s %s%n", "KIND", "WHERE", "SUBJECT", "DETAIL");
        for (Finding f : r.findings()) {
            out.printf("%-18s %-22s %-45s %s%n", f.kind(), f.where(), f.subject(), f.detail());
        }
    }
}
