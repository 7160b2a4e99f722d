package dev.outboxkit.cli;

import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.relay.ConnectionPoolerException;
import dev.outboxkit.relay.UnsafeConfigurationException;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code outbox}: the one executable. Exit status: 0 success, 1 runtime failure, 2 usage or
 * configuration error (the message names the option), 3 {@code reconcile} found something.
 */
@Command(name = "outbox", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Transactional outbox for PostgreSQL and Kafka: relays and operations (dev stack and demo: dev-tools jar).",
        // dev, demo, config-reference and help are added in this order by commandLine()
        subcommands = {MigrateCommand.class, RelayCommand.class, StatusCommand.class, DeadLettersCommand.class,
                ReplayCommand.class, ReconcileCommand.class, PurgeCommand.class, IntentsCommand.class, ConsoleCommand.class},
        footer = {"", "Every option can also come from the environment (--jdbc-url → OUTBOX_JDBC_URL) or from a "
                + "properties file named by --config / OUTBOX_CONFIG (jdbc-url=…); flags win over the environment, "
                + "the environment over the file.",
                "Exit status: 0 success, 1 runtime failure, 2 usage or configuration error, 3 reconcile found something."})
public final class Main {

    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;
    /** {@code reconcile} found something. */
    public static final int FOUND = 3;

    /** The commands of the dev-tools jar ({@link CommandProvider}); the sidecar answers them with {@link NotInThisJar}. */
    public static final List<String> DEV_TOOLS_COMMANDS = List.of("dev", "demo");

    @CommandLine.Option(names = "--config", paramLabel = "FILE", scope = CommandLine.ScopeType.INHERIT,
            description = "Properties file with option values (jdbc-url=…, kafka.KEY=…).")
    String config;

    public static void main(String[] args) {
        int code = execute(System.getenv(), new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
        System.exit(code);
    }

    /** Runs {@code args} with the given environment and streams; returns the exit status. */
    public static int execute(Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
        Settings settings;
        try {
            settings = Settings.load(args, env);
        } catch (ConfigurationException e) {
            err.println("outbox: " + e.getMessage());
            return USAGE;
        }
        CommandLine cli = commandLine(settings);
        cli.setOut(out);
        cli.setErr(err);
        return cli.execute(args);
    }

    static CommandLine commandLine(Settings settings) {
        CommandLine cli = new CommandLine(new Main(), new Factory(settings));
        Map<String, Class<?>> provided = new HashMap<>();
        for (CommandProvider provider : ServiceLoader.load(CommandProvider.class, Main.class.getClassLoader())) {
            for (Class<?> command : provider.commands()) {
                String name = command.getAnnotation(Command.class).name();
                if (!DEV_TOOLS_COMMANDS.contains(name)) {
                    throw new IllegalStateException(provider.getClass().getName() + " provides '" + name
                            + "', not one of " + DEV_TOOLS_COMMANDS);
                }
                provided.put(name, command);
            }
        }
        for (String name : DEV_TOOLS_COMMANDS) {
            if (provided.containsKey(name)) {
                cli.addSubcommand(provided.get(name));
            } else {
                cli.addSubcommand(name, new NotInThisJar());
            }
        }
        cli.addSubcommand(ConfigReferenceCommand.class);
        cli.addSubcommand(CommandLine.HelpCommand.class);
        RelayCommand.addRelayOptions(cli);
        cli.setDefaultValueProvider(settings);
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            Throwable cause = e;
            if (cause instanceof CommandLine.ParameterException pe) {
                commandLine.getErr().println("outbox: " + pe.getMessage());
                return USAGE;
            }
            if (cause instanceof MissingGrantsException) {
                commandLine.getErr().println("outbox: " + cause.getMessage());
                return USAGE;
            }
            if (cause instanceof UnsafeConfigurationException || cause instanceof ConfigurationException
                    || cause instanceof ConnectionPoolerException) {
                commandLine.getErr().println("outbox: configuration error: " + cause.getMessage());
                return USAGE;
            }
            commandLine.getErr().println("outbox: " + commandLine.getCommandName() + " failed: " + describe(cause));
            org.slf4j.LoggerFactory.getLogger(Main.class).debug("failure", cause);
            return FAILED;
        });
        cli.setParameterExceptionHandler((e, args) -> {
            e.getCommandLine().getErr().println("outbox: " + e.getMessage());
            e.getCommandLine().getErr().println("Try '" + e.getCommandLine().getCommandSpec().qualifiedName() + " --help'.");
            return USAGE;
        });
        return cli;
    }

    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder(String.valueOf(t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage()));
        Throwable cause = t.getCause();
        int depth = 0;
        while (cause != null && depth++ < 3) {
            if (cause.getMessage() != null && !sb.toString().contains(cause.getMessage())) {
                sb.append(" (caused by ").append(cause.getClass().getSimpleName()).append(": ").append(cause.getMessage()).append(')');
            }
            cause = cause.getCause();
        }
        return dev.outboxkit.core.Secret.maskUrl(sb.toString());
    }

    /** Gives every command the settings (for kafka.* pass-through). */
    static final class Factory implements CommandLine.IFactory {
        private final Settings settings;
        private final CommandLine.IFactory fallback = CommandLine.defaultFactory();

        Factory(Settings settings) {
            this.settings = settings;
        }

        @Override
        public <K> K create(Class<K> cls) throws Exception {
            K instance = fallback.create(cls);
            if (instance instanceof NeedsSettings n) {
                n.settings(settings);
            }
            return instance;
        }
    }

    /** Commands that read kafka.* pass-through properties. */
    interface NeedsSettings {
        void settings(Settings settings);
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"outbox " + (v == null ? "development build" : v)};
        }
    }
}
