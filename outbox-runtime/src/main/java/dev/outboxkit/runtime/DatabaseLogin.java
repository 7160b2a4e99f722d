package dev.outboxkit.runtime;

import dev.outboxkit.core.Secret;
import java.util.Properties;
import java.util.StringJoiner;
import org.postgresql.Driver;

/**
 * Not API: shared by the relays and the CLI.
 *
 * <p>How a relay (or a CLI command) logs in to PostgreSQL, resolved in one place: the user and the password are
 * set explicitly or come from the URL's {@code user=} and {@code password=} parameters, read as the PostgreSQL
 * driver reads them ({@link Driver#parseURL}); an explicit value wins. {@link #jdbcUrl()} has neither parameter:
 * the driver lets the URL win over the properties it is handed, so a URL that kept them would override an
 * explicit user, and a password would travel in a string that ends up in logs.
 *
 * @param jdbcUrl  the URL without {@code user=} and {@code password=}
 * @param user     the role, or null when neither the setting nor the URL names one
 * @param password the password, or null
 */
public record DatabaseLogin(String jdbcUrl, String user, Secret password) {

    /**
     * Resolves the login from the configured URL, user and password.
     *
     * @throws IllegalArgumentException when {@code jdbcUrl} is not a PostgreSQL JDBC URL (masked in the message)
     */
    public static DatabaseLogin resolve(String jdbcUrl, String user, Secret password) {
        Properties fromUrl = jdbcUrl == null ? null : Driver.parseURL(jdbcUrl, null);
        if (fromUrl == null) {
            throw new IllegalArgumentException("jdbcUrl '" + Secret.maskUrl(jdbcUrl)
                    + "' is not a PostgreSQL JDBC URL (expected jdbc:postgresql://host:port/database)");
        }
        String role = isBlank(user) ? fromUrl.getProperty("user") : user;
        String urlPassword = fromUrl.getProperty("password");
        Secret secret = password != null ? password : urlPassword == null ? null : Secret.of(urlPassword);
        return new DatabaseLogin(withoutCredentials(jdbcUrl), isBlank(role) ? null : role, secret);
    }

    /**
     * This login, if it names a user.
     *
     * @param userSetting where a user is set explicitly, e.g. {@code user(…)} or {@code --user (or OUTBOX_USER)}
     * @param urlSetting  where the URL is set, e.g. {@code jdbcUrl}
     * @throws IllegalArgumentException "user is required: …", naming every place a user can come from
     */
    public DatabaseLogin requireUser(String userSetting, String urlSetting) {
        if (user == null) {
            throw new IllegalArgumentException("user is required: set " + userSetting + ", or put user=ROLE (and "
                    + "password=…) in " + urlSetting + "; neither names one (URL " + Secret.maskUrl(jdbcUrl) + ")");
        }
        return this;
    }

    /** Whether the URL sets {@code ApplicationName} (the driver lets it win over a pool's default). */
    public boolean urlNamesApplication() {
        Properties fromUrl = Driver.parseURL(jdbcUrl, null);
        return fromUrl != null && fromUrl.getProperty("ApplicationName") != null;
    }

    @Override
    public String toString() {
        return "DatabaseLogin[" + Secret.maskUrl(jdbcUrl) + " as " + user + "]";
    }

    /** {@code jdbcUrl} without its {@code user=} and {@code password=} parameters (parameter names as the driver matches them). */
    static String withoutCredentials(String jdbcUrl) {
        int query = jdbcUrl.indexOf('?');
        if (query < 0) {
            return jdbcUrl;
        }
        StringJoiner kept = new StringJoiner("&");
        for (String parameter : jdbcUrl.substring(query + 1).split("&")) {
            String name = parameter.split("=", 2)[0];
            if (!parameter.isEmpty() && !name.equals("user") && !name.equals("password")) {
                kept.add(parameter);
            }
        }
        return kept.length() == 0 ? jdbcUrl.substring(0, query) : jdbcUrl.substring(0, query + 1) + kept;
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }
}
