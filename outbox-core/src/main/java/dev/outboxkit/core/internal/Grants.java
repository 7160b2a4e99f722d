package dev.outboxkit.core.internal;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.MissingGrantsException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Not API: the PostgreSQL privileges one component needs on the outboxkit tables, checked at its start (issue 26,
 * item 5) so that a missing grant stops it at once with the statements to run, instead of failing later, mid-batch,
 * with "permission denied". Each component declares exactly what its README's least-privilege section lists.
 *
 * <p>Checked with {@code has_schema_privilege}, {@code has_table_privilege} and {@code has_sequence_privilege} for
 * {@code current_user}, so owners, superusers and privileges held through role membership pass. A table that does
 * not exist is not reported here: the components' schema checks say which migration is missing.
 */
public final class Grants {

    private final String schema;
    private final Map<String, List<String>> tables = new LinkedHashMap<>();
    private final List<String> sequences = new ArrayList<>();
    private boolean replication;

    private Grants(String schema) {
        this.schema = Identifiers.requireValid("schema", schema);
    }

    /** Requirements on the outboxkit tables of {@code schema} (USAGE on the schema is always one). */
    public static Grants in(String schema) {
        return new Grants(schema);
    }

    /** {@code privileges} (SELECT, INSERT, UPDATE, DELETE) on {@code table}, every one of them. */
    public Grants table(String table, String... privileges) {
        tables.computeIfAbsent(Identifiers.requireValid("table", table), k -> new ArrayList<>()).addAll(List.of(privileges));
        return this;
    }

    /** USAGE (or UPDATE) on {@code sequence}: {@code nextval}. */
    public Grants sequence(String sequence) {
        sequences.add(Identifiers.requireValid("sequence", sequence));
        return this;
    }

    /** The REPLICATION attribute (a logical replication connection). */
    public Grants replication() {
        replication = true;
        return this;
    }

    /** Throws {@link MissingGrantsException} naming {@code component} unless every requirement holds. */
    public void require(Connection c, String component) throws SQLException {
        List<String> missing = missing(c);
        if (!missing.isEmpty()) {
            throw new MissingGrantsException(component, currentUser(c), missing);
        }
    }

    /** The statements that would give {@code current_user} what it lacks; empty when nothing is missing. */
    public List<String> missing(Connection c) throws SQLException {
        String role = quoteRole(currentUser(c));
        List<String> out = new ArrayList<>();
        if (!holds(c, "SELECT has_schema_privilege((SELECT oid FROM pg_namespace WHERE nspname = ?), 'USAGE')", schema)) {
            out.add("GRANT USAGE ON SCHEMA " + Identifiers.quote("schema", schema) + " TO " + role);
        }
        for (Map.Entry<String, List<String>> t : tables.entrySet()) {
            String name = Identifiers.qualified(schema, t.getKey());
            List<String> lacking = new ArrayList<>();
            for (String privilege : t.getValue()) {
                if (!holds(c, "SELECT has_table_privilege(" + RELATION + ", ?)", schema, t.getKey(), privilege)) {
                    lacking.add(privilege);
                }
            }
            if (!lacking.isEmpty()) {
                out.add("GRANT " + String.join(", ", lacking) + " ON " + name + " TO " + role);
            }
        }
        for (String s : sequences) {
            String name = Identifiers.qualified(schema, s);
            if (!holds(c, "SELECT has_sequence_privilege(" + RELATION + ", 'USAGE,UPDATE')", schema, s)) {
                out.add("GRANT USAGE ON SEQUENCE " + name + " TO " + role);
            }
        }
        if (replication) {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user");
                 ResultSet rs = ps.executeQuery()) {
                if (rs.next() && !rs.getBoolean(1)) {
                    out.add("ALTER ROLE " + role + " REPLICATION");
                }
            }
        }
        return out;
    }

    /**
     * The relation's oid from the catalogs, not {@code to_regclass}: resolving a qualified name needs USAGE on the
     * schema, and a role without it must still learn which table privileges it lacks. Parameters: schema, name.
     */
    private static final String RELATION = "(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " WHERE n.nspname = ? AND c.relname = ?)";

    /** True when the check holds, or cannot be made because the object does not exist (NULL). */
    private static boolean holds(Connection c, String sql, String... parameters) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setString(i + 1, parameters[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                boolean held = rs.getBoolean(1);
                return held || rs.wasNull();
            }
        }
    }

    private static String currentUser(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT current_user"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** A role name from the database (not from configuration), quoted as an SQL identifier. */
    private static String quoteRole(String role) {
        return '"' + role.replace("\"", "\"\"") + '"';
    }
}
