package dev.outboxkit.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.outboxkit.ops.retention.Retention;
import java.io.PrintWriter;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "purge", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = {"Retention: drop expired intent-ledger partitions (and create them ahead), purge processed_event ids "
                + "no redelivery can reach, expired idempotency keys and old dead letters, each with its window.",
                "With --dry-run nothing is changed: what would be purged is printed.",
                "Without it, the purge takes the schema's retention lock (the one every sidecar's schedule takes), so it never"
                        + " runs beside a scheduled round."})
final class PurgeCommand extends Options.DatabaseAndKafka {

    @Mixin
    Options.RetentionWindows windows;

    @Option(names = "--dry-run", description = "Only report what would be purged.")
    boolean dryRun;

    @Option(names = "--json", description = "Print JSON instead of text.")
    boolean json;

    @Option(names = "--lock-wait", paramLabel = "DURATION", defaultValue = "PT1M",
            description = "How long to wait for a retention round running elsewhere (a relay sidecar's --retention-interval"
                    + " schedule or another purge) to end; then the command fails (exit 1) and changes nothing.")
    Duration lockWait;

    @Override
    public Integer call() throws Exception {
        try (Options.RetentionJob job = windows.open(db, kafka, settings, "outbox-purge", null)) {
            Retention.Result r = dryRun ? job.retention.purge(true) : job.retention.purgeExclusively(lockWait);
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
                out.printf("dead letters: %s%n", windows.deadLetterRetention == null ? "kept (no --dead-letter-retention)"
                        : r.deadLetters() + (dryRun ? " would be purged" : " purged"));
                out.printf("outbox archive (published rows kept in MARK mode): %s%n", windows.archiveRetention == null
                        ? "kept (no --archive-retention)" : r.archivedEvents() + (dryRun ? " would be purged" : " purged"));
            }
            return Main.OK;
        }
    }
}
