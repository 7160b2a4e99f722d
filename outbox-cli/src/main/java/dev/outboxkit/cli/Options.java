package dev.outboxkit.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.console.Console;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.Secret;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.ops.retention.Retention;
import dev.outboxkit.relay.ProducerSafety;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.runtime.ConnectionPools;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.JdbcUrls;
import dev.outboxkit.writer.IdempotencyKeys;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine;
import picocli.CommandLine.Help.Visibility;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Option groups shared by the commands (picocli mixins): each option is defined here once. */
final class Options {

    private Options() {
    }

    /** Checks a schema name where it is parsed, so a bad one is a usage error naming the option. */
    static final class SchemaConverter implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                return Identifiers.requireValid("schema", value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Where the outbox lives. */
    static final class Database {
        @Spec(Spec.Target.MIXEE)
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--jdbc-url", paramLabel = "URL", showDefaultValue = Visibility.NEVER,
                description = "PostgreSQL JDBC URL; anything the driver accepts (sslmode, sslrootcert, …), several hosts with "
                        + "targetServerType=primary behind a failover pair. Passwords in it are never printed.")
        String jdbcUrl;

        @Option(names = "--user", paramLabel = "ROLE", description = "Database role (or user= in the URL; this wins over it).")
        String user;

        @Option(names = "--password", paramLabel = "SECRET", showDefaultValue = Visibility.NEVER,
                description = "Database password (or password= in the URL; this wins over it); prefer OUTBOX_PASSWORD or the config file over the flag.")
        String password;

        @Option(names = "--schema", paramLabel = "NAME", defaultValue = OutboxTables.DEFAULT_SCHEMA, converter = SchemaConverter.class,
                description = "Schema holding the outboxkit tables (validated identifier).")
        String schema;

        String requireUrl() {
            if (jdbcUrl == null || jdbcUrl.isBlank()) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "Missing option '--jdbc-url' (or OUTBOX_JDBC_URL, or jdbc-url= in the --config file)");
            }
            if (!jdbcUrl.startsWith("jdbc:postgresql:")) {
                throw new CommandLine.ParameterException(spec.commandLine(), "Invalid value for option '--jdbc-url': "
                        + Secret.maskUrl(jdbcUrl) + " is not a jdbc:postgresql: URL");
            }
            try {
                JdbcUrls.requirePrimaryTarget(jdbcUrl, "--jdbc-url");
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "Invalid value for option " + e.getMessage());
            }
            return jdbcUrl;
        }

        Secret secretPassword() {
            return password == null ? null : Secret.of(password);
        }

        HikariDataSource dataSource(String poolName, int size) {
            return ConnectionPools.open(login(), poolName, size, "outboxkit-cli");
        }

        /** The URL, user and password as the relays resolve them: --user and --password win over the URL's. */
        DatabaseLogin login() {
            return DatabaseLogin.resolve(requireUrl(), user, secretPassword());
        }

        /**
         * {@link #login()} with a user, or a configuration error naming every place one can come from.
         */
        DatabaseLogin loginWithUser() {
            try {
                return login().requireUser(place("--user"), "the JDBC URL (" + place("--jdbc-url") + ")");
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException(e.getMessage());
            }
        }

        /** {@code --user} → "--user, OUTBOX_USER or user= in the --config file". */
        private static String place(String option) {
            return option + ", " + Settings.envName(option) + " or " + Settings.fileKey(option) + "= in the --config file";
        }

        /** A pool for another database (a consumer's): its URL's own user and password, else this role and password. */
        HikariDataSource pool(String url, String poolName, int size) {
            DatabaseLogin own = DatabaseLogin.resolve(url, null, null);
            DatabaseLogin login = own.user() != null ? own : DatabaseLogin.resolve(url, user, secretPassword());
            return ConnectionPools.open(login, poolName, size, "outboxkit-cli");
        }

        String describe() {
            return Secret.maskUrl(jdbcUrl) + " schema " + schema;
        }

        /** The operations API ({@code status}, {@code dead-letters}, {@code replay}) on this schema, over {@code ds}. */
        OutboxAdmin admin(DataSource ds) {
            return OutboxAdmin.builder().outboxDatabase(ds, schema).build();
        }
    }

    /** A command on the outbox database and Kafka, given the kafka.* pass-through settings ({@code purge}, the relays). */
    abstract static class DatabaseAndKafka implements Callable<Integer>, Main.NeedsSettings {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Database db;
        @Mixin
        Kafka kafka;
        Settings settings;

        @Override
        public void settings(Settings settings) {
            this.settings = settings;
        }
    }

    /** Where events go. */
    static final class Kafka {
        @Spec(Spec.Target.MIXEE)
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT,…", description = "Kafka bootstrap servers.")
        String bootstrapServers;

        @Option(names = "--kafka", paramLabel = "KEY=VALUE", showDefaultValue = Visibility.NEVER, mapFallbackValue = "",
                description = "A Kafka client property (repeatable), e.g. --kafka security.protocol=SASL_SSL. "
                        + "Also kafka.KEY=VALUE in the config file and OUTBOX_KAFKA_KEY (dots as underscores) in the environment.")
        Map<String, String> kafka = new LinkedHashMap<>();

        String requireBootstrap() {
            if (bootstrapServers == null || bootstrapServers.isBlank()) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "Missing option '--bootstrap-servers' (or OUTBOX_BOOTSTRAP_SERVERS)");
            }
            return bootstrapServers;
        }

        /** File and environment properties, then flags; checked for unsafe producer settings. */
        Map<String, Object> clientProperties(Settings settings, boolean producer) {
            Map<String, Object> merged = new LinkedHashMap<>(settings.kafkaProperties());
            merged.putAll(kafka);
            if (producer) {
                ProducerSafety.check(merged);
            }
            return merged;
        }
    }

    /** The sidecar's HTTP port. */
    static final class Http {
        @Option(names = "--http-port", paramLabel = "PORT", defaultValue = "8080",
                description = "Port for /health/live, /health/ready, /metrics and the console (--console, outbox console); 0 picks a free port, -1 turns HTTP off.")
        int httpPort;
    }

    /** The operator console on the sidecar's HTTP port (docs/console.md). */
    static final class ConsoleOptions {
        @Option(names = "--console", defaultValue = "false",
                description = "Serve the operator console (docs/console.md) at /console on --http-port: overview, dead letters, "
                        + "where an event is. Read-only unless --console-write-actions.")
        boolean enabled;

        @Mixin
        ConsoleAccess access;

        /** The console, or null when {@code --console} is off (then no console option may be given). */
        ConsoleMount open(Database db, Map<String, String> env, int httpPort, Supplier<Relay.Health> health,
                          MeterRegistry relayMeters) {
            if (!enabled) {
                if (access.writeActions) {
                    throw new ConfigurationException("--console-write-actions needs --console: the console is off");
                }
                return null;
            }
            return access.open(db, env, httpPort, health, relayMeters);
        }
    }

    /** Who may act in the console, and as whom ({@code relay --console}, {@code outbox console}). */
    static final class ConsoleAccess {
        @Option(names = "--console-write-actions", defaultValue = "false",
                description = "Let an operator who logged in with the console's token retry and discard dead letters (audited "
                        + "under --console-operator); needs --console-token-file or --console-token-env.")
        boolean writeActions;

        @Option(names = "--console-show-payloads", defaultValue = "false",
                description = "Show an event's payload (its first 64 KiB) on the console's event page; each read is audited "
                        + "(logger outboxkit.audit). Off by default: payloads may hold personal data.")
        boolean showPayloads;

        @Option(names = "--console-trace-url", paramLabel = "URL",
                description = "The tracing UI's page of one trace, with {traceId} where the trace id goes (for example "
                        + "https://jaeger.example/trace/{traceId}): the console's event page links the trace that wrote the "
                        + "event. Without it the page shows the trace id only.")
        String traceUrl;

        @Option(names = "--console-token-file", paramLabel = "PATH",
                description = "File whose first line is the console's operator token (16 characters or more; 32 random ones are "
                        + "better). The token is never an option value, so it stays out of process lists and shell history.")
        Path tokenFile;

        @Option(names = "--console-token-env", paramLabel = "VARIABLE",
                description = "Name of the environment variable holding the console's operator token (instead of --console-token-file).")
        String tokenEnv;

        @Option(names = "--console-operator", paramLabel = "NAME", defaultValue = "console-operator",
                description = "Who the audit log (logger outboxkit.audit) and the operations journal say retried or discarded, for the console's login.")
        String operator;

        /**
         * The console on its own pool of two connections. Configuration errors (exit 2): no HTTP port, write actions
         * without a token, an unreadable or short token.
         *
         * @param health the relay in this process; null: none
         */
        /** {@code health} and {@code relayMeters}: the relay of this process, null for the standalone console. */
        ConsoleMount open(Database db, Map<String, String> env, int httpPort, Supplier<Relay.Health> health,
                          MeterRegistry relayMeters) {
            if (httpPort < 0) {
                throw new ConfigurationException("--console needs the HTTP server: --http-port is -1 (off); give a port");
            }
            Secret token = token(env);
            if (writeActions && token == null) {
                throw new ConfigurationException("--console-write-actions needs an operator token: give --console-token-file PATH "
                        + "(a file whose first line is the token) or --console-token-env VARIABLE");
            }
            Console.Builder builder = Console.builder();
            try {
                builder.traceUrl(traceUrl);
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("Invalid value for option '--console-trace-url': " + e.getMessage());
            }
            HikariDataSource pool = db.dataSource("outbox-console", 2);
            try {
                builder.admin(db.admin(pool)).writeActions(writeActions).showPayloads(showPayloads);
                if (health != null) {
                    builder.relayHealth(health);
                }
                if (relayMeters != null) {
                    builder.meterRegistry(relayMeters);
                }
                if (token != null) {
                    builder.operatorToken(operator, token);
                }
                return new ConsoleMount(builder.build(), pool);
            } catch (IllegalArgumentException e) {
                pool.close();
                throw new ConfigurationException("Invalid console setting: " + e.getMessage());
            } catch (RuntimeException e) {
                pool.close();
                throw e;
            }
        }

        private Secret token(Map<String, String> env) {
            if (tokenFile != null && tokenEnv != null) {
                throw new ConfigurationException("give either --console-token-file or --console-token-env, not both");
            }
            if (tokenFile != null) {
                try {
                    List<String> lines = Files.readAllLines(tokenFile);
                    String first = lines.isEmpty() ? "" : lines.get(0).strip();
                    if (first.isEmpty()) {
                        throw new ConfigurationException("Invalid value for option '--console-token-file': " + tokenFile
                                + " is empty; write the operator token on its first line");
                    }
                    return Secret.of(first);
                } catch (IOException e) {
                    throw new ConfigurationException("Invalid value for option '--console-token-file': cannot read " + tokenFile
                            + " (" + e.getClass().getSimpleName() + ")");
                }
            }
            if (tokenEnv != null) {
                String value = env.get(tokenEnv);
                if (value == null || value.isBlank()) {
                    throw new ConfigurationException("Invalid value for option '--console-token-env': the variable " + tokenEnv
                            + " is not set (or empty) in the sidecar's environment");
                }
                return Secret.of(value.strip());
            }
            return null;
        }
    }

    /** A built console with the pool it reads through; closing it closes both. */
    record ConsoleMount(Console console, HikariDataSource pool) implements AutoCloseable {
        @Override
        public void close() {
            try {
                console.close();
            } finally {
                pool.close();
            }
        }
    }

    /** How many day partitions of the intent ledger are created ahead ({@code intents enable}, {@code purge}, sidecar retention). */
    static final class PartitionsAhead {
        @Option(names = "--partitions-ahead", paramLabel = "DAYS", defaultValue = "3",
                description = "Day partitions of the intent ledger created ahead, from today (UTC).")
        int partitionsAhead;
    }

    /**
     * The retention windows, shared by {@code outbox purge} and the sidecars' scheduled retention
     * ({@code relay poll|cdc --retention-interval}): one definition for each window.
     */
    static final class RetentionWindows {
        @Mixin
        PartitionsAhead ahead;

        @Option(names = "--intent-retention", paramLabel = "DURATION", defaultValue = "P8D",
                description = "Keep intents this long (whole UTC days are dropped); longer than reconcile's --lookback and --dedupe-window.")
        Duration intentRetention;

        @Option(names = "--group", paramLabel = "GROUP",
                description = "Purge this consumer group's processed_event ids (repeatable); needs --bootstrap-servers to check committed offsets.")
        List<String> groups = new ArrayList<>();

        @Option(names = "--consumer-jdbc-url", paramLabel = "URL", showDefaultValue = Visibility.NEVER,
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

        @Option(names = "--journal-retention", paramLabel = "DURATION", defaultValue = "P90D",
                description = "Delete entries of the operations journal (reconciliation runs, retention rounds, dead-letter actions) finished longer ago than this.")
        Duration journalRetention;

        /**
         * Opens what the job needs (an outbox database pool of three: the sidecar's lock, the job; a consumer
         * pool when --consumer-jdbc-url is set; a Kafka admin when groups are purged) and builds it.
         * Builder refusals are configuration errors (exit 2).
         */
        RetentionJob open(Database db, Kafka kafka, Settings settings, String poolName, MeterRegistry registry) {
            Map<String, Object> adminProps = null;
            if (!groups.isEmpty()) {
                adminProps = kafka.clientProperties(settings, false);
                adminProps.put("bootstrap.servers", kafka.requireBootstrap());
            }
            db.requireUrl();
            RetentionJob job = new RetentionJob();
            try {
                job.outboxDatabase = db.dataSource(poolName, 3);
                job.consumer = consumerJdbcUrl == null ? null : db.pool(consumerJdbcUrl, poolName + "-consumer", 1);
                job.admin = adminProps == null ? null : Admin.create(adminProps);
                Retention.Builder builder = Retention.builder().outboxDatabase(job.outboxDatabase, db.schema).intentRetention(intentRetention)
                        .partitionsAhead(ahead.partitionsAhead).deadLetterRetention(deadLetterRetention)
                        .archiveRetention(archiveRetention).journalRetention(journalRetention).kafkaAdmin(job.admin)
                        .meterRegistry(registry).actor(DeadLettersCommand.operator());
                for (String group : groups) {
                    builder.inbox(job.consumer == null ? job.outboxDatabase : job.consumer, db.schema, group, processedRetention);
                }
                try {
                    if (idempotencyRetention != null) {
                        builder.idempotencyKeys(IdempotencyKeys.builder().schema(db.schema).retention(idempotencyRetention).build());
                    }
                    job.retention = builder.build();
                } catch (IllegalArgumentException e) {
                    throw new ConfigurationException(e.getMessage());
                }
                return job;
            } catch (RuntimeException e) {
                job.close();
                throw e;
            }
        }
    }

    /** A built Retention with the pools and admin it runs on; closing it closes them. */
    static final class RetentionJob implements AutoCloseable {
        HikariDataSource outboxDatabase;
        HikariDataSource consumer;
        Admin admin;
        Retention retention;

        @Override
        public void close() {
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
            }
            if (consumer != null) {
                consumer.close();
            }
            if (outboxDatabase != null) {
                outboxDatabase.close();
            }
        }
    }
}
