package dev.outboxkit.runtime;

import dev.outboxkit.core.Secret;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import org.postgresql.Driver;
import org.postgresql.core.BaseConnection;
import org.postgresql.util.HostSpec;

/**
 * Not API: shared by the relays and the CLI.
 *
 * <p>What a PostgreSQL JDBC URL names, read as the driver reads it ({@link Driver#parseURL}): one host, or several
 * ({@code jdbc:postgresql://h1:5432,h2:5432/db?targetServerType=primary}, the driver's multi-host form, which follows a
 * primary that moves at a failover), and which host a live connection reached.
 */
public final class JdbcUrls {

    /** The {@code targetServerType} values that only ever connect to a server that takes writes. */
    private static final Set<String> PRIMARY_ONLY = Set.of("primary", "master");

    /** One {@code host:port} of a URL. */
    public record HostPort(String host, int port) {

        @Override
        public String toString() {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    private JdbcUrls() {
    }

    /**
     * The hosts {@code jdbcUrl} names, in its order (the driver's default port where one has none).
     *
     * @throws IllegalArgumentException when it is not a PostgreSQL JDBC URL (masked in the message)
     */
    public static List<HostPort> hosts(String jdbcUrl) {
        Properties p = parse(jdbcUrl);
        String[] hosts = p.getProperty("PGHOST", "localhost").split(",");
        String[] ports = p.getProperty("PGPORT", "5432").split(",");
        List<HostPort> out = new ArrayList<>(hosts.length);
        for (int i = 0; i < hosts.length; i++) {
            String port = i < ports.length && !ports[i].isEmpty() ? ports[i] : "5432";
            out.add(new HostPort(hosts[i], Integer.parseInt(port)));
        }
        return out;
    }

    /** The database {@code jdbcUrl} names, or an empty string. */
    public static String database(String jdbcUrl) {
        return parse(jdbcUrl).getProperty("PGDBNAME", "");
    }

    /** {@code host:port[,host:port…]/database} of a PostgreSQL URL (never a parameter), or a phrase when it is not one. */
    public static String where(String jdbcUrl) {
        Properties p = jdbcUrl == null ? null : Driver.parseURL(jdbcUrl, null);
        if (p == null) {
            return "(its data source)";
        }
        StringBuilder out = new StringBuilder();
        for (HostPort h : hosts(jdbcUrl)) {
            out.append(out.length() == 0 ? "" : ",").append(h);
        }
        return out.append('/').append(p.getProperty("PGDBNAME", "")).toString();
    }

    /**
     * Refuses a URL that names several hosts without {@code targetServerType=primary}: the driver would then connect
     * to the first host that answers, which may be a standby, where every write fails (read-only). One host needs
     * nothing: it is the primary, or an endpoint that follows it.
     *
     * @param setting the setting's name for the message, e.g. {@code jdbcUrl}
     * @throws IllegalArgumentException naming the setting and the fix
     */
    public static void requirePrimaryTarget(String jdbcUrl, String setting) {
        List<HostPort> hosts = hosts(jdbcUrl);
        if (hosts.size() < 2) {
            return;
        }
        String target = parse(jdbcUrl).getProperty("targetServerType");
        if (target == null || !PRIMARY_ONLY.contains(target.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException(setting + " '" + Secret.maskUrl(jdbcUrl) + "' names " + hosts.size()
                    + " hosts with " + (target == null ? "no targetServerType" : "targetServerType=" + target)
                    + ": the driver may then connect to a standby, where every write the relay makes is refused. Add "
                    + "targetServerType=primary, so it connects to whichever host is the primary now");
        }
    }

    /**
     * {@code jdbcUrl} on {@code host} alone, its parameters kept but {@code targetServerType} (a URL of one host is
     * meant for that host, standby or not).
     */
    public static String withHost(String jdbcUrl, HostPort host) {
        parse(jdbcUrl);
        String rest = jdbcUrl.substring("jdbc:postgresql://".length());
        int slash = rest.indexOf('/');
        String path = slash < 0 ? "/" : rest.substring(slash);
        int query = path.indexOf('?');
        StringBuilder out = new StringBuilder("jdbc:postgresql://").append(host).append(query < 0 ? path : path.substring(0, query));
        if (query >= 0) {
            String sep = "?";
            for (String parameter : path.substring(query + 1).split("&")) {
                if (!parameter.isEmpty() && !parameter.split("=", 2)[0].equalsIgnoreCase("targetServerType")) {
                    out.append(sep).append(parameter);
                    sep = "&";
                }
            }
        }
        return out.toString();
    }

    /** Where {@code c} (a pgjdbc connection, pooled or not) is connected: one of its URL's hosts. */
    public static HostPort connectedTo(Connection c) throws SQLException {
        HostSpec spec = c.unwrap(BaseConnection.class).getQueryExecutor().getHostSpec();
        return new HostPort(spec.getHost(), spec.getPort());
    }

    private static Properties parse(String jdbcUrl) {
        Properties p = jdbcUrl == null ? null : Driver.parseURL(jdbcUrl, null);
        if (p == null) {
            throw new IllegalArgumentException("jdbcUrl '" + Secret.maskUrl(jdbcUrl)
                    + "' is not a PostgreSQL JDBC URL (expected jdbc:postgresql://host:port/database)");
        }
        return p;
    }
}
