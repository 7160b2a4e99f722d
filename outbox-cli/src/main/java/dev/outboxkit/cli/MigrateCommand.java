package dev.outboxkit.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.sql.Migrations;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

@Command(name = "migrate", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = "Apply the outboxkit schema (Flyway; history in outboxkit_schema_history). Applying twice does nothing.")
final class MigrateCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    Options.Database db;

    @Override
    public Integer call() {
        try (HikariDataSource ds = db.dataSource("outbox-migrate", 2)) {
            Migrations.Result result = Migrations.migrate(ds, db.schema);
            spec.commandLine().getOut().printf("schema %s: applied %d migration%s, now at version %s%n",
                    result.schema(), result.applied(), result.applied() == 1 ? "" : "s", result.version());
        }
        return Main.OK;
    }
}
