package dev.outboxkit.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.ProducerSafety;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Help.Visibility;
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

    static final class RouteConverter implements CommandLine.ITypeConverter<TopicRoute> {
        @Override
        public TopicRoute convert(String value) {
            try {
                return TopicRoute.of(value);
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
                description = "PostgreSQL JDBC URL; anything the driver accepts (sslmode, sslrootcert, …). Passwords in it are never printed.")
        String jdbcUrl;

        @Option(names = "--user", paramLabel = "ROLE", description = "Database role (or user= in the URL).")
        String user;

        @Option(names = "--password", paramLabel = "SECRET", showDefaultValue = Visibility.NEVER,
                description = "Database password; prefer OUTBOX_PASSWORD or the config file over the flag.")
        String password;

        @Option(names = "--schema", paramLabel = "NAME", defaultValue = "public", converter = SchemaConverter.class,
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
            return jdbcUrl;
        }

        Secret secretPassword() {
            return password == null ? null : Secret.of(password);
        }

        HikariDataSource dataSource(String poolName, int size) {
            return pool(requireUrl(), poolName, size);
        }

        /** A pool for another database (a consumer's) with this role and password unless the URL names its own. */
        HikariDataSource pool(String url, String poolName, int size) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            if (user != null) {
                config.setUsername(user);
            }
            if (password != null) {
                config.setPassword(password);
            }
            config.setPoolName(poolName);
            config.setMaximumPoolSize(size);
            config.setMinimumIdle(0);
            // One-shot commands should fail fast; sidecars reconnect on their own schedule.
            config.setConnectionTimeout(size <= 2 ? 5_000 : 15_000);
            config.setInitializationFailTimeout(-1);
            return new HikariDataSource(config);
        }

        String describe() {
            return Secret.maskUrl(jdbcUrl) + " schema " + schema;
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
                description = "Port for /health/live, /health/ready and /metrics; 0 picks a free port, -1 turns HTTP off.")
        int httpPort;
    }
}
