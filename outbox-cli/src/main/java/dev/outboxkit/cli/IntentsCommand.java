package dev.outboxkit.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.ops.reconcile.IntentLedger;
import java.io.PrintWriter;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "intents", mixinStandardHelpOptions = true,
        description = "The intent ledger (outbox_intent): enable or disable the triggers that fill it (intents and their published_at), or show their state and the partitions.")
final class IntentsCommand implements Callable<Integer> {

    enum Action { enable, disable, status }

    @Spec
    CommandLine.Model.CommandSpec spec;
    @Mixin
    Options.Database db;

    @Parameters(index = "0", paramLabel = "ACTION", description = "${COMPLETION-CANDIDATES}")
    Action action;

    @Mixin
    Options.PartitionsAhead ahead;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        try (HikariDataSource ds = db.dataSource("outbox-intents", 1)) {
            IntentLedger ledger = new IntentLedger(ds, db.schema);
            switch (action) {
                case enable -> {
                    // one transaction: the intent trigger and the three that record publication (schema version 7)
                    int created = ledger.createPartitions(LocalDate.now(ZoneOffset.UTC), ahead.partitionsAhead);
                    ledger.enable();
                    out.printf("intent ledger enabled on %s (%d partition(s) created)%n", db.describe(), created);
                }
                case disable -> {
                    ledger.disable();
                    out.printf("intent ledger disabled on %s; stop scheduled reconcile runs too (every new effect would look like a phantom)%n",
                            db.describe());
                }
                case status -> out.printf("intent ledger %s (triggers %s), day partitions %s%n",
                        ledger.enabled() ? "enabled" : "disabled", ledger.triggers(), ledger.partitions());
            }
        }
        return Main.OK;
    }
}
