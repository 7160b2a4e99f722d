package dev.outboxkit.core;

import dev.outboxkit.core.spi.Checks;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * SQL identifiers that come from configuration (schema, table prefix, slot, publication).
 * They are checked against an allow-list and always double-quoted when put into SQL, so a
 * configured value can never change the meaning of a statement.
 */
public final class Identifiers {

    /** Lower-case, PostgreSQL's unquoted-identifier alphabet, at most 63 bytes. */
    private static final Pattern LEGAL = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final Set<String> RESERVED = Set.of(
            "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both", "case",
            "cast", "check", "collate", "column", "constraint", "create", "current_catalog", "current_date",
            "current_role", "current_time", "current_timestamp", "current_user", "default", "deferrable",
            "desc", "distinct", "do", "else", "end", "except", "false", "fetch", "for", "foreign", "from",
            "grant", "group", "having", "in", "initially", "intersect", "into", "lateral", "leading", "limit",
            "localtime", "localtimestamp", "not", "null", "offset", "on", "only", "or", "order", "placing",
            "primary", "references", "returning", "select", "session_user", "some", "symmetric", "table",
            "then", "to", "trailing", "true", "union", "unique", "user", "using", "variadic", "when", "where",
            "window", "with");

    /** The rule {@link #requireValid} enforces, for references. */
    public static final String RULE = "1 to 63 lower-case letters, digits and underscores, starting with a letter or "
            + "underscore, not a reserved SQL word";

    /** The rule {@link #requireInstanceId} enforces, for references. */
    public static final String INSTANCE_ID_RULE = "1 to 200 printable ASCII characters without spaces";

    private Identifiers() {
    }

    /**
     * Returns {@code value} if it can name a relay instance (in leases, dead letters and logs): 1 to 200 printable
     * ASCII characters without spaces. Both relays check the same rule.
     */
    public static String requireInstanceId(String what, String value) {
        if (value == null || value.isBlank() || value.length() > 200
                || !value.chars().allMatch(ch -> ch > 0x20 && ch < 0x7f)) {
            throw new IllegalArgumentException(what + " must be " + INSTANCE_ID_RULE + ", got '"
                    + (value == null ? "null" : Checks.printable(value)) + "'");
        }
        return value;
    }

    /**
     * Returns {@code value} if it is a legal identifier, else throws with a message naming
     * {@code what} (the configuration key) and the rule.
     */
    public static String requireValid(String what, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        if (!LEGAL.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " '" + Checks.printable(value) + "' is not a legal identifier: use 1 to 63 "
                    + "lower-case letters, digits and underscores, starting with a letter or underscore");
        }
        if (RESERVED.contains(value.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException(what + " '" + value + "' is a reserved SQL word: choose another name");
        }
        return value;
    }


    /** The validated identifier in double quotes, ready for SQL. */
    public static String quote(String what, String value) {
        return '"' + requireValid(what, value) + '"';
    }

    /** {@code "schema"."name"}, both validated. */
    public static String qualified(String schema, String name) {
        return quote("schema", schema) + '.' + quote("table", name);
    }

}
