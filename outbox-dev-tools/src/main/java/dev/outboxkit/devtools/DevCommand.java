package dev.outboxkit.devtools;

import dev.outboxkit.cli.Main;
import dev.outboxkit.cli.Shutdown;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.testkit.TestDatabase;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "dev", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = {"Embedded PostgreSQL 17 (wal_level=logical, schema applied) and a Kafka broker on this machine,",
                "until Ctrl-C or SIGTERM; then both are stopped and their files removed."})
final class DevCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--pg-port", paramLabel = "PORT", defaultValue = "0", description = "PostgreSQL port; 0 picks a free one.")
    int pgPort;

    @Option(names = "--database", paramLabel = "NAME", defaultValue = "outbox", converter = DevCommand.IdentifierConverter.class,
            description = "Name of the database to create.")
    String database;

    @Override
    public Integer call() throws Exception {
        Shutdown shutdown = Shutdown.onSignals();
        PrintWriter out = spec.commandLine().getOut();
        try (DevStack stack = new DevStack(pgPort)) {
            TestDatabase db = stack.database(database);
            out.println("outbox dev stack is up (Ctrl-C to stop)");
            out.println("  PostgreSQL 17  " + db.jdbcUrl() + "  (user " + db.user() + ", password " + db.password()
                    + ": a throw-away development server)");
            out.println("  Kafka          " + stack.kafka().bootstrapServers());
            out.println();
            out.println("export OUTBOX_JDBC_URL=" + db.jdbcUrl());
            out.println("export OUTBOX_USER=" + db.user());
            out.println("export OUTBOX_PASSWORD=" + db.password());
            out.println("export OUTBOX_BOOTSTRAP_SERVERS=" + stack.kafka().bootstrapServers());
            out.flush();
            shutdown.await();
            out.println("stopping the dev stack");
            out.flush();
        }
        return Main.OK;
    }

    static final class IdentifierConverter implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                return Identifiers.requireValid("name", value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
