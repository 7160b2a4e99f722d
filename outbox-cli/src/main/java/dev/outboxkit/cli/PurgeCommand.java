package dev.outboxkit.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.reconcile.Retention;
import dev.outboxkit.writer.IdempotencyKeys;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "purge", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = {"Retention: drop expired intent-ledger partitions (and create them ahead), purge processed_event ids "
                + "no redelivery can reach, expired idempotency keys and old dead letters, each with its window.",
                "With --dry-run nothing is changed: what would be purged is printed."})
final class PurgeCommand implements Callable<Integer>, Main.NeedsSettings {

    @Spec
    CommandLine.Model.CommandSpec spec;
    @Mixin
    Options.Database db;
    @Mixin
    Options.Kafka kafka;
    Settings settings;

    @Option(names = "--intent-retention", paramLabel = "DURATION", defaultValue = "P8D",
            description = "Keep intents this long (whole UTC days are dropped); longer than reconcile's --lookback and --dedupe-window.")
    Duration intentRetention;

    @Option(names = "--partitions-ahead", defaultValue = "3", description = "Day partitions of the intent ledger created ahead.")
    int partitionsAhead;

    @Option(names = "--group", paramLabel = "GROUP",
            description = "Purge this consumer group's processed_event ids (repeatable); needs --bootstrap-servers to check committed offsets.")
    List<String> groups = new ArrayList<>();

    @Option(names = "--consumer-jdbc-url", paramLabel = "URL", showDefaultValue = CommandLine.Help.Visibility.NEVER,
            description = "Database holding processed_event; default: --jdbc-url.")
    String consumerJdbcUrl;

    @Option(names = "--processed-retention", paramLabel = "DURATION", defaultValue = "P7D",
            description = "Dedupe window of the groups: ids younger than this are kept whatever the offsets.")
    Duration processedRetention;

    @Option(names = "--idempotency-retention", paramLabel = "DURATION",
            description = "Purge idempotency keys older than this (tombstones kept); default: not purged here (the writer's sidecar does it with its per-scope windows).")
    Duration idempotencyRetention;

    @Option(names = "--dead-letter-retention", paramLabel = "DURATION",
            description = "Purge dead letters parked longer ago than this; default: keep them for ever.")
    Duration deadLetterRetention;

    @Option(names = "--archive-retention", paramLabel = "DURATION",
            description = "Purge published rows kept by a MARK-mode relay (the archive 'outbox replay' reads) once published longer ago than this; default: keep them.")
    Duration archiveRetention;

    @Option(names = "--dry-run", description = "Only report what would be purged.")
    boolean dryRun;

    @Option(names = "--json", description = "Print JSON instead of text.")
    boolean json;

    @Override
    public void settings(Settings settings) {
        this.settings = settings;
    }

    @Override
    public Integer call() throws Exception {
        if (!groups.isEmpty()) {
            kafka.requireBootstrap();
        }
        try (HikariDataSource producer = db.dataSource("outbox-purge", 2);
             HikariDataSource consumer = consumerJdbcUrl == null ? null : db.pool(consumerJdbcUrl, "outbox-purge-consumer", 1);
             Admin admin = groups.isEmpty() ? null : Admin.create(withBootstrap())) {
            Retention.Builder builder = Retention.builder().producer(producer, db.schema).intentRetention(intentRetention)
                    .partitionsAhead(partitionsAhead).deadLetterRetention(deadLetterRetention)
                    .archiveRetention(archiveRetention).kafkaAdmin(admin);
            for (String group : groups) {
                builder.inbox(consumer == null ? producer : consumer, db.schema, group, processedRetention);
            }
            Retention retention;
            try {
                if (idempotencyRetention != null) {
                    builder.idempotencyKeys(IdempotencyKeys.builder().schema(db.schema).retention(idempotencyRetention).build());
                }
                retention = builder.build();
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException(e.getMessage());
            }
            Retention.Result r = retention.purge(dryRun);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(r));
            } else {
                String verb = dryRun ? "would drop" : "dropped";
                out.printf("intent ledger: %s %d partition(s) %s, kept %d for an unpublished backlog %s, %d row(s) from the default partition, created %d ahead%n",
                        verb, r.intents().dropped().size(), r.intents().dropped(), r.intents().keptForBacklog().size(),
                        r.intents().keptForBacklog(), r.intents().defaultRowsDeleted(), r.partitionsCreated());
                r.processedEvents().forEach((g, p) -> out.printf("processed_event %s: %s %d, kept %d not yet committed past, %d without Kafka coordinates%n",
                        g, dryRun ? "would purge" : "purged", p.purged(), p.keptNotCommitted(), p.keptWithoutCoordinates()));
                out.printf("idempotency keys: %s%n", r.idempotencyKeys() < 0 ? "not purged (dry run or no --idempotency-retention)"
                        : r.idempotencyKeys() + " purged");
                out.printf("dead letters: %s%n", deadLetterRetention == null ? "kept (no --dead-letter-retention)"
                        : r.deadLetters() + (dryRun ? " would be purged" : " purged"));
                out.printf("outbox archive (published rows kept in MARK mode): %s%n", archiveRetention == null
                        ? "kept (no --archive-retention)" : r.archivedEvents() + (dryRun ? " would be purged" : " purged"));
            }
            return Main.OK;
        }
    }

    private java.util.Map<String, Object> withBootstrap() {
        java.util.Map<String, Object> props = kafka.clientProperties(settings, false);
        props.put("bootstrap.servers", kafka.requireBootstrap());
        return props;
    }
}
