package dev.outboxkit.writer.outcomes;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** Faults injected into the real database: a trigger that refuses every write to a table until closed. */
public final class Faults {

    private Faults() {
    }

    /** Writes to {@code table} fail with SQLState P0001 ("injected fault") until the returned handle is closed. */
    public static AutoCloseable failWrites(DataSource dataSource, String table) throws SQLException {
        String trigger = "outcome_fault_" + table.replaceAll("\\W", "_");
        exec(dataSource, "CREATE OR REPLACE FUNCTION " + trigger + "() RETURNS trigger LANGUAGE plpgsql AS "
                + "$$ BEGIN RAISE EXCEPTION 'injected fault: writes to % fail', TG_TABLE_NAME; END $$");
        exec(dataSource, "CREATE TRIGGER " + trigger + " BEFORE INSERT OR UPDATE ON " + table
                + " FOR EACH ROW EXECUTE FUNCTION " + trigger + "()");
        return () -> exec(dataSource, "DROP TRIGGER " + trigger + " ON " + table);
    }

    private static void exec(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            s.execute(sql);
        }
    }
}
