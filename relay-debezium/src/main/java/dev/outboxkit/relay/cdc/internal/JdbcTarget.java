package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.Secret;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.postgresql.Driver;

/**
 * Not API: public for the relay's tests and tools.
 *
 * <p>Host, port, database and driver options of a PostgreSQL JDBC URL, in the form Debezium's
 * connector wants them ({@code database.hostname}, {@code database.port}, ...). Debezium opens its
 * own connections (one of them a replication connection), so it cannot take the URL as it is.
 */
public record JdbcTarget(String host, int port, String database, Map<String, String> driverOptions) {

    /** Driver options handed on to Debezium as {@code database.<name>}. */
    private static final Set<String> PASSED_ON = Set.of("sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword",
            "sslfactory", "sslfactoryarg", "sslhostnameverifier", "connecttimeout", "sockettimeout", "tcpkeepalive",
            "options", "applicationname", "targetservertype");

    public static JdbcTarget parse(String jdbcUrl) {
        Properties p = Driver.parseURL(jdbcUrl, null);
        if (p == null) {
            throw new IllegalArgumentException("jdbcUrl '" + Secret.maskUrl(jdbcUrl)
                    + "' is not a PostgreSQL JDBC URL (expected jdbc:postgresql://host:port/database)");
        }
        String host = p.getProperty("PGHOST");
        String port = p.getProperty("PGPORT");
        String database = p.getProperty("PGDBNAME");
        if (host == null || host.contains(",")) {
            throw new IllegalArgumentException("jdbcUrl '" + Secret.maskUrl(jdbcUrl)
                    + "' must name exactly one host: a replication slot lives on one server (the primary)");
        }
        if (database == null || database.isEmpty()) {
            throw new IllegalArgumentException("jdbcUrl '" + Secret.maskUrl(jdbcUrl) + "' must name the database");
        }
        Map<String, String> options = new LinkedHashMap<>();
        for (String name : p.stringPropertyNames()) {
            String lower = name.toLowerCase(Locale.ROOT);
            if (PASSED_ON.contains(lower)) {
                options.put(name, p.getProperty(name));
            }
        }
        return new JdbcTarget(host, port == null ? 5432 : Integer.parseInt(port), database, Map.copyOf(options));
    }
}
