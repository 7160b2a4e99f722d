package dev.outboxkit.core.spi;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.MissingGrantsException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Not API: the PostgreSQL privileges one component needs on the outboxkit tables, checked at its start
 * so that a missing grant stops it at once with the statements to run, instead of failing later, mid-batch,
 * with "permission denied". Each component declares exactly what its README's least-privilege section lists.
 *
 * <p>Checked with the {@code has_*_privilege} functions for {@code current_user}, so owners, superusers and
 * privileges held through role membership pass, in <em>one</em> query whatever the number of privileges. Objects are
 * found through the catalogs, not by resolving names, so a role without USAGE on the schema still learns the rest. A
 * table that does not exist is not reported here: the components' schema checks say which migration is missing.
 *
 * <p>What each role needs is defined once, in {@link RoleGrants}; components check those, and the testkit's
 * {@code DocumentedGrants} and the READMEs' least-privilege sections follow them ({@link #privileges()}).
 */
public final class Grants {

    /**
     * One privilege: an SQL expression true when held (NULL when its object does not exist), and the statement it
     * belongs to ({@code group}) with its part of it: {@code item}, or the text of the SQL expression {@code detail}
     * when there is one (the owner's name).
     */
    private record Check(String held, List<String> parameters, String group, String item, String detail,
                         List<String> detailParameters) {
        Check(String held, List<String> parameters, String group, String item) {
            this(held, parameters, group, item, null, List.of());
        }
    }

    private final String schema;
    private final List<Check> checks = new ArrayList<>();
    private boolean replication;
    private boolean temporary;

    private Grants(String schema) {
        this.schema = Identifiers.requireValid("schema", schema);
        checks.add(new Check("has_schema_privilege((SELECT oid FROM pg_namespace WHERE nspname = ?), 'USAGE')",
                List.of(schema), "SCHEMA", "USAGE"));
    }

    /** Requirements on the outboxkit tables of {@code schema} (USAGE on the schema is always one). */
    public static Grants in(String schema) {
        return new Grants(schema);
    }

    /** {@code privileges} (SELECT, INSERT, UPDATE, DELETE) on {@code table}, every one of them. */
    public Grants table(String table, String... privileges) {
        Identifiers.requireValid("table", table);
        for (String p : privileges) {
            checks.add(new Check("has_table_privilege(" + RELATION + ", ?)", List.of(schema, table, p), "TABLE " + table, p));
        }
        return this;
    }

    /** {@code privilege} on these {@code columns} of {@code table} (held on the table or on each column). */
    public Grants columns(String table, String privilege, String... columns) {
        Identifiers.requireValid("table", table);
        for (String column : columns) {
            checks.add(new Check("(SELECT has_column_privilege(a.attrelid, a.attnum, ?) FROM pg_attribute a WHERE a.attrelid = "
                    + RELATION + " AND a.attname = ?)", List.of(privilege, schema, table, Identifiers.requireValid("column", column)),
                    "COLUMNS " + privilege + " " + table, column));
        }
        return this;
    }

    /** USAGE (or UPDATE) on {@code sequence}: {@code nextval}. */
    public Grants sequence(String sequence) {
        Identifiers.requireValid("sequence", sequence);
        checks.add(new Check("has_sequence_privilege(" + RELATION + ", 'USAGE,UPDATE')", List.of(schema, sequence),
                "SEQUENCE " + sequence, "USAGE"));
        return this;
    }

    /**
     * Membership in the role that owns {@code table} (or ownership itself): what creating its partitions, dropping them
     * and ALTER TABLE take; no GRANT gives it.
     */
    public Grants ownerOf(String table) {
        Identifiers.requireValid("table", table);
        checks.add(new Check("(SELECT pg_has_role(c.relowner, 'USAGE') FROM pg_class c WHERE c.oid = " + RELATION + ")",
                List.of(schema, table), "OWNER " + table, null,
                "(SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = " + RELATION + ")", List.of(schema, table)));
        return this;
    }

    /** CREATE on the schema, or on the database while the schema does not exist yet (it is created first). */
    public Grants create() {
        checks.add(new Check("coalesce(has_schema_privilege((SELECT oid FROM pg_namespace WHERE nspname = ?), 'CREATE'),"
                + " has_database_privilege(current_database(), 'CREATE'))", List.of(schema), "CREATE", null,
                "(SELECT CASE WHEN count(*) > 0 THEN 'SCHEMA' ELSE 'DATABASE' END FROM pg_namespace WHERE nspname = ?)",
                List.of(schema)));
        return this;
    }

    /** TEMPORARY on the current database (a temporary table). */
    public Grants temporary() {
        temporary = true;
        return this;
    }

    /** The REPLICATION attribute (a logical replication connection). */
    public Grants replication() {
        replication = true;
        return this;
    }

    /** Throws {@link MissingGrantsException} naming {@code component} unless every requirement holds. */
    public void require(Connection c, String component) throws SQLException {
        Result r = check(c);
        if (!r.missing.isEmpty()) {
            throw new MissingGrantsException(component, r.role, r.missing);
        }
    }

    /** The statements that would give {@code current_user} what it lacks; empty when nothing is missing. */
    public List<String> missing(Connection c) throws SQLException {
        return check(c).missing;
    }

    private record Result(String role, List<String> missing) {
    }

    /**
     * One privilege as a {@code GRANT} gives it, for the tests and docs that derive the documented grants from this one
     * definition ({@link RoleGrants}).
     *
     * @param privilege {@code SELECT}, {@code INSERT}, {@code UPDATE}, {@code DELETE} or one of them on columns
     *                  ({@code SELECT (a, b)}), {@code USAGE}, {@code CREATE}, {@code TEMPORARY}, {@code REPLICATION},
     *                  {@code MEMBER}
     * @param kind      {@code TABLE}, {@code SEQUENCE}, {@code SCHEMA}, {@code DATABASE} (the current one: object
     *                  empty), {@code ROLE} (the REPLICATION attribute: object empty) or {@code OWNER} (membership in
     *                  the role owning table {@code object})
     * @param object    the unqualified table or sequence name, or the schema
     */
    public record Privilege(String privilege, String kind, String object) {
    }

    /** Every requirement, one {@link Privilege} each (a column privilege once, with all its columns), in order. */
    public List<Privilege> privileges() {
        List<Privilege> out = new ArrayList<>();
        Set<String> columnGroups = new HashSet<>();
        for (Check k : checks) {
            String[] g = k.group.split(" ");
            switch (g[0]) {
                case "SCHEMA" -> out.add(new Privilege("USAGE", "SCHEMA", schema));
                case "CREATE" -> out.add(new Privilege("CREATE", "SCHEMA", schema));
                case "OWNER" -> out.add(new Privilege("MEMBER", "OWNER", g[1]));
                case "SEQUENCE" -> out.add(new Privilege("USAGE", "SEQUENCE", g[1]));
                case "COLUMNS" -> {
                    if (columnGroups.add(k.group)) {
                        List<String> columns = checks.stream().filter(o -> o.group.equals(k.group)).map(Check::item).toList();
                        out.add(new Privilege(g[1] + " (" + String.join(", ", columns) + ")", "TABLE", g[2]));
                    }
                }
                default -> out.add(new Privilege(k.item, "TABLE", g[1]));
            }
        }
        if (temporary) {
            out.add(new Privilege("TEMPORARY", "DATABASE", ""));
        }
        if (replication) {
            out.add(new Privilege("REPLICATION", "ROLE", ""));
        }
        return out;
    }

    /**
     * One query: {@code current_user}, {@code current_database()}, then per check a text that is NULL when the
     * privilege is held or its object is missing, and otherwise the check's item or detail.
     */
    private Result check(Connection c) throws SQLException {
        List<Check> all = new ArrayList<>(checks);
        if (temporary) {
            all.add(new Check("has_database_privilege(current_database(), 'TEMPORARY')", List.of(), "TEMPORARY", "TEMPORARY"));
        }
        if (replication) {
            all.add(new Check("(SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user)", List.of(),
                    "REPLICATION", "REPLICATION"));
        }
        StringBuilder sql = new StringBuilder("SELECT current_user, current_database()");
        List<String> parameters = new ArrayList<>();
        for (Check k : all) {
            sql.append(", CASE WHEN coalesce(").append(k.held).append(", true) THEN NULL ELSE ");
            parameters.addAll(k.parameters);
            if (k.detail != null) {
                sql.append(k.detail);
                parameters.addAll(k.detailParameters);
            } else {
                sql.append("?::text");
                parameters.add(k.item);
            }
            sql.append(" END");
        }
        String role;
        String database;
        Map<String, List<String>> lacking = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            for (int i = 0; i < parameters.size(); i++) {
                ps.setString(i + 1, parameters.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                role = rs.getString(1);
                database = rs.getString(2);
                for (int i = 0; i < all.size(); i++) {
                    String answer = rs.getString(i + 3);
                    if (answer != null) {
                        lacking.computeIfAbsent(all.get(i).group, g -> new ArrayList<>()).add(answer);
                    }
                }
            }
        }
        String to = " TO " + quote(role);
        List<String> out = new ArrayList<>();
        lacking.forEach((group, items) -> out.add(statement(group, items, role, database, to)));
        return new Result(role, out);
    }

    private String statement(String group, List<String> items, String role, String database, String to) {
        String kind = group.contains(" ") ? group.substring(0, group.indexOf(' ')) : group;
        String object = group.substring(group.lastIndexOf(' ') + 1);
        return switch (kind) {
            case "SCHEMA" -> "GRANT USAGE ON SCHEMA " + Identifiers.quote("schema", schema) + to;
            case "CREATE" -> items.get(0).equals("SCHEMA") ? "GRANT CREATE ON SCHEMA " + Identifiers.quote("schema", schema) + to
                    : "GRANT CREATE ON DATABASE " + quote(database) + to;
            case "SEQUENCE" -> "GRANT USAGE ON SEQUENCE " + Identifiers.qualified(schema, object) + to;
            case "COLUMNS" -> "GRANT " + group.split(" ")[1] + " (" + String.join(", ", items) + ") ON "
                    + Identifiers.qualified(schema, object) + to;
            case "OWNER" -> "GRANT " + quote(items.get(0)) + to;
            case "TEMPORARY" -> "GRANT TEMPORARY ON DATABASE " + quote(database) + to;
            case "REPLICATION" -> "ALTER ROLE " + quote(role) + " REPLICATION";
            default -> "GRANT " + String.join(", ", items) + " ON " + Identifiers.qualified(schema, object) + to;
        };
    }

    /**
     * The relation's oid from the catalogs, not {@code to_regclass}: resolving a qualified name needs USAGE on the
     * schema, and a role without it must still learn which table privileges it lacks. Parameters: schema, name.
     */
    private static final String RELATION = "(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " WHERE n.nspname = ? AND c.relname = ?)";

    /** A role or database name from the database (not from configuration), quoted as an SQL identifier. */
    private static String quote(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }
}
