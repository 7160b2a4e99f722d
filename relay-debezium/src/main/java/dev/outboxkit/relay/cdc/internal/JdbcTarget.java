package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.Secret;
import dev.outboxkit.runtime.JdbcUrls;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.StringJoiner;
import org.postgresql.Driver;

/**
 * Not API: public for the relay's tests and tools.
 *
 * <p>Hosts, database and driver options of a PostgreSQL JDBC URL, in the form Debezium's connector wants them
 * ({@code database.hostname}, {@code database.port}, ...). Debezium opens its own connections (one of them a
 * replication connection) to one host, so a URL naming several ({@code targetServerType=primary}) is resolved first:
 * {@link #at} the host the relay's pool reached, the primary now.
 *
 * @param hosts the URL's hosts, in order (one for a single server or an endpoint that follows the primary)
 */
public record JdbcTarget(List<JdbcUrls.HostPort> hosts, String database, Map<String, String> driverOptions) {

    /** Driver options handed on to Debezium as {@code database.<name>}. */
    private static final Set<String> PASSED_ON = Set.of("sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword",
            "sslfactory", "sslfactoryarg", "sslhostnameverifier", "connecttimeout", "sockettimeout", "tcpkeepalive",
            "options", "applicationname", "targetservertype");

    public JdbcTarget {
        hosts = List.copyOf(hosts);
        driverOptions = Map.copyOf(driverOptions);
    }

    public static JdbcTarget parse(String jdbcUrl) {
        Properties p = Driver.parseURL(jdbcUrl, null);
        if (p == null) {
            throw new IllegalArgumentException("jdbcUrl '" + Secret.maskUrl(jdbcUrl)
                    + "' is not a PostgreSQL JDBC URL (expected jdbc:postgresql://host:port/database)");
        }
        String database = p.getProperty("PGDBNAME");
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
        return new JdbcTarget(JdbcUrls.hosts(jdbcUrl), database, options);
    }

    /** This target on {@code host} alone: where Debezium streams from for one session. */
    public JdbcTarget at(JdbcUrls.HostPort host) {
        return new JdbcTarget(List.of(host), database, driverOptions);
    }

    /** The host, when this target names one ({@link #at}). */
    public JdbcUrls.HostPort host() {
        if (hosts.size() != 1) {
            throw new IllegalStateException("a target of " + hosts.size() + " hosts has no single host: resolve it first");
        }
        return hosts.get(0);
    }

    /** {@code jdbc:postgresql://host:port/database?<driver options>} of a single-host target, plus {@code extra}. */
    public String jdbcUrl(Map<String, String> extra) {
        StringJoiner query = new StringJoiner("&", "?", "").setEmptyValue("");
        Map<String, String> all = new LinkedHashMap<>(driverOptions);
        all.putAll(extra);
        all.forEach((k, v) -> query.add(k + "=" + URLEncoder.encode(v, StandardCharsets.UTF_8)));
        return "jdbc:postgresql://" + host() + "/" + URLEncoder.encode(database, StandardCharsets.UTF_8) + query;
    }
}
