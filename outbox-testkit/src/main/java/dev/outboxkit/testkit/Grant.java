package dev.outboxkit.testkit;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One privilege a component's least-privilege section documents, for tests that give a login role exactly those
 * grants, or all of them but one ({@link #roleWith}). {@link #statement} is the {@code GRANT} a component that
 * checks its grants at start should name when this one is missing, in outboxkit's quoting.
 *
 * @param privilege {@code SELECT}, {@code INSERT}, {@code UPDATE}, {@code DELETE} (or one of them on columns,
 *                  {@code SELECT (a, b)}), {@code USAGE}, {@code CREATE}, {@code TEMPORARY}, {@code REPLICATION} (a role
 *                  attribute: {@code object} is ignored) or {@code MEMBER} (of the role {@code object})
 * @param kind      {@code TABLE}, {@code SEQUENCE}, {@code SCHEMA}, {@code DATABASE}, {@code ROLE} or {@code MEMBER}
 * @param object    the table or sequence name (unqualified), the schema, database or owner role name
 */
public record Grant(String privilege, String kind, String object) {

    /** {@code privileges} on table {@code table}, one {@link Grant} each. */
    public static List<Grant> onTable(String table, String... privileges) {
        List<Grant> out = new ArrayList<>();
        for (String p : privileges) {
            out.add(new Grant(p, "TABLE", table));
        }
        return out;
    }

    public static Grant usageOnSchema(String schema) {
        return new Grant("USAGE", "SCHEMA", schema);
    }

    public static Grant usageOnSequence(String sequence) {
        return new Grant("USAGE", "SEQUENCE", sequence);
    }

    public static Grant replication() {
        return new Grant("REPLICATION", "ROLE", "");
    }

    /** {@code privilege} on {@code columns} of {@code table} (a column privilege, not the table's). */
    public static Grant onColumns(String table, String privilege, String... columns) {
        return new Grant(privilege + " (" + String.join(", ", columns) + ")", "TABLE", table);
    }

    /** {@code privilege} ({@code CREATE}, {@code TEMPORARY}) on database {@code database}. */
    public static Grant onDatabase(String database, String privilege) {
        return new Grant(privilege, "DATABASE", database);
    }

    /** Membership in role {@code owner}: what owning its tables takes (ALTER, partitions), which no GRANT on them gives. */
    public static Grant memberOf(String owner) {
        return new Grant("MEMBER", "MEMBER", owner);
    }

    /** The statement that gives {@code role} this privilege, objects in {@code schema}, quoted as outboxkit quotes. */
    public String statement(String schema, String role) {
        String r = '"' + role + '"';
        return switch (kind) {
            case "SCHEMA" -> "GRANT " + privilege + " ON SCHEMA \"" + object + "\" TO " + r;
            case "DATABASE" -> "GRANT " + privilege + " ON DATABASE \"" + object + "\" TO " + r;
            case "MEMBER" -> "GRANT \"" + object + "\" TO " + r;
            case "SEQUENCE" -> "GRANT USAGE ON SEQUENCE \"" + schema + "\".\"" + object + "\" TO " + r;
            case "ROLE" -> "ALTER ROLE " + r + " REPLICATION";
            default -> "GRANT " + privilege + " ON \"" + schema + "\".\"" + object + "\" TO " + r;
        };
    }

    /**
     * Creates login role {@code role} (password {@code password}) on {@code db}'s server holding {@code grants} on
     * {@code db}'s schema {@code schema}, except {@code without} (null: all of them). Drop it with {@link #dropRole}.
     */
    public static void roleWith(TestDatabase db, String schema, String role, String password, List<Grant> grants,
                                Grant without) throws SQLException {
        List<String> sql = new ArrayList<>();
        sql.add("CREATE ROLE \"" + role + "\" LOGIN PASSWORD '" + password.replace("'", "''") + "'");
        for (Grant g : grants) {
            if (!g.equals(without)) {
                sql.add(g.statement(schema, role));
            }
        }
        db.exec(sql.toArray(String[]::new));
    }

    /** Drops a role {@link #roleWith} made, and every privilege it holds in {@code db}. */
    public static void dropRole(TestDatabase db, String role) throws SQLException {
        db.exec("DROP OWNED BY \"" + role + "\"", "DROP ROLE \"" + role + "\"");
    }

    @Override
    public String toString() {
        return kind.equals("MEMBER") ? "member of " + object
                : privilege + (kind.equals("ROLE") ? "" : " on " + kind.toLowerCase(Locale.ROOT) + " " + object);
    }
}
