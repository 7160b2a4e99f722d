package dev.outboxkit.testkit;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * Plain SQL for tests: a count, statements run one after another, a column of strings. On a
 * {@link TestDatabase} use its {@link TestDatabase#count}, {@link TestDatabase#exec},
 * {@link TestDatabase#execute} and {@link TestDatabase#strings}; these take the connection or pool a
 * test already has. The overloads with {@code params} bind values (a slot's or a role's name) to the
 * statement's {@code ?} instead of splicing them into the SQL, where a quote in a value would change
 * the statement.
 */
public final class Sql {

    private Sql() {
    }

    /** The first column of the first row of {@code sql}, as a long (a count). */
    public static long count(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** {@link #count(Connection, String)} with {@code params} bound to the {@code ?} of {@code sql}, in order. */
    public static long count(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, params);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** {@link #count(Connection, String)} on a connection of {@code ds}. */
    public static long count(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection()) {
            return count(c, sql);
        }
    }

    /** Runs each statement in turn (in autocommit mode unless the caller turned it off). */
    public static void exec(Connection c, String... sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            for (String statement : sql) {
                s.execute(statement);
            }
        }
    }

    /**
     * Runs one statement with {@code params} bound to its {@code ?}, in order (a function called for its
     * effect, such as creating a slot, or a delete). A separate name from {@link #exec(Connection,
     * String...)}, whose arguments are all statements.
     */
    public static void execute(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, params);
            ps.execute();
        }
    }

    /** {@link #exec(Connection, String...)} on a connection of {@code ds}. */
    public static void exec(DataSource ds, String... sql) throws SQLException {
        try (Connection c = ds.getConnection()) {
            exec(c, sql);
        }
    }

    /** The first column of every row of {@code sql}. */
    public static List<String> strings(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            return firstColumn(rs);
        }
    }

    /** {@link #strings(Connection, String)} with {@code params} bound to the {@code ?} of {@code sql}, in order. */
    public static List<String> strings(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, params);
            try (ResultSet rs = ps.executeQuery()) {
                return firstColumn(rs);
            }
        }
    }

    private static void bind(PreparedStatement ps, Object... params) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            ps.setObject(i + 1, params[i]);
        }
    }

    private static List<String> firstColumn(ResultSet rs) throws SQLException {
        List<String> out = new ArrayList<>();
        while (rs.next()) {
            out.add(rs.getString(1));
        }
        return out;
    }
}
