package dev.outboxkit.core;

import java.util.Objects;
import java.util.regex.Pattern;

/** A value that must never reach a log, a config dump or an exception message. */
public final class Secret {

    public static final String HIDDEN = "[hidden]";
    private static final Pattern URL_PASSWORD = Pattern.compile("(?i)(password=)[^&;]*");
    private static final Pattern URL_USERINFO = Pattern.compile("(//[^/@:]*:)[^@/]*@");
    private static final Pattern JAAS_PASSWORD = Pattern.compile("(?i)(password\\s*=\\s*)(\"[^\"]*\"|\\S+)");

    private final String value;

    private Secret(String value) {
        this.value = Objects.requireNonNull(value, "value");
    }

    public static Secret of(String value) {
        return new Secret(value);
    }

    /** The secret itself: call only where it is handed to a driver or client. */
    public String reveal() {
        return value;
    }

    @Override
    public String toString() {
        return HIDDEN;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Secret s && s.value.equals(value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    /** A JDBC URL with any password (query parameter or user-info) replaced by [hidden]. */
    public static String maskUrl(String url) {
        if (url == null) {
            return null;
        }
        String masked = URL_PASSWORD.matcher(url).replaceAll("$1" + HIDDEN);
        return URL_USERINFO.matcher(masked).replaceAll("$1" + HIDDEN + "@");
    }

    /** True for configuration keys whose values are secrets (passwords, JAAS configs, keys). */
    public static boolean isSecretKey(String key) {
        String k = key.toLowerCase(java.util.Locale.ROOT);
        return k.contains("password") || k.contains("jaas") || k.contains("secret")
                || k.endsWith(".key") || k.contains("token") || k.contains("credential");
    }

    /** The value as it may be printed for configuration key {@code key}. */
    public static String printable(String key, String value) {
        if (value == null) {
            return null;
        }
        if (isSecretKey(key)) {
            return HIDDEN;
        }
        String lowerKey = key.toLowerCase(java.util.Locale.ROOT);
        if (lowerKey.contains("url")) {
            return maskUrl(value);
        }
        return JAAS_PASSWORD.matcher(value).replaceAll("$1" + HIDDEN);
    }
}
