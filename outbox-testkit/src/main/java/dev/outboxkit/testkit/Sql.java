package dev.outboxkit.testkit;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * Plain SQL for tests: a count, statements run one after another, a column of strings. On a
 * {@link TestDatabase} use its {@link TestDatabase#count}, {@link TestDatabase#exec} and
 * {@link TestDatabase#strings}; these take the connection or pool a test already has.
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

    /** {@link #exec(Connection, String...)} on a connection of {@code ds}. */
    public static void exec(DataSource ds, String... sql) throws SQLException {
        try (Connection c = ds.getConnection()) {
            exec(c, sql);
        }
    }

    /** The first column of every row of {@code sql}. */
    public static List<String> strings(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            List<String> out = new ArrayList<>();
            while (rs.next()) {
                out.add(rs.getString(1));
            }
            return out;
        }
    }
}
