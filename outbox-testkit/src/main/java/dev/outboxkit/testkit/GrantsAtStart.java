package dev.outboxkit.testkit;

import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.core.OutboxTables;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The check every {@code GrantsAtStartTest} makes of a component that checks its grants at start:
 * with each documented grant revoked in turn, the component refuses with a {@link MissingGrantsException} naming
 * exactly the statement that gives it back; with all of them it runs. Roles are made and dropped here, one at a time,
 * on {@code db}'s server (no pool: a plain data source per role).
 */
public final class GrantsAtStart {

    /** Where the grants are given: the schema the tests' databases hold the tables in. */
    private static final String SCHEMA = OutboxTables.DEFAULT_SCHEMA;

    /** What the component does as a role: start, write, run a command. */
    @FunctionalInterface
    public interface Run {
        void as(DataSource role) throws Exception;
    }

    private GrantsAtStart() {
    }

    /**
     * Runs {@code run} once per grant of {@code grants} as a role holding all the others, expecting the exception with
     * exactly that grant's statement and {@code component} in its message, then once as a role holding them all,
     * expecting no {@link MissingGrantsException}. Objects in schema {@code public}. Returns the exceptions, in order.
     *
     * @param prefix role names start with it; roles are per server, so include {@code db.name()}
     */
    public static List<MissingGrantsException> eachMissingGrantIsNamed(TestDatabase db, String prefix, List<Grant> grants,
                                                                       String component, Run run) throws Exception {
        List<MissingGrantsException> seen = new ArrayList<>();
        for (Grant missing : grants) {
            String role = prefix + "_" + seen.size();
            Grant.roleWith(db, SCHEMA, role, "pw", grants, missing);
            try {
                MissingGrantsException e = null;
                try {
                    run.as(as(db, role));
                } catch (MissingGrantsException thrown) {
                    e = thrown;
                }
                String expected = missing.statement(SCHEMA, role);
                if (e == null) {
                    throw new AssertionError(component + " ran without " + missing + "; expected it to refuse with " + expected);
                }
                if (!e.grants().equals(List.of(expected)) || !e.role().equals(role) || !e.getMessage().contains(component)) {
                    throw new AssertionError("without " + missing + " expected " + component + " to name exactly [" + expected
                            + "] for role " + role + ", got: " + e.getMessage(), e);
                }
                seen.add(e);
            } finally {
                Grant.dropRole(db, role);
            }
        }
        String role = prefix + "_all";
        Grant.roleWith(db, SCHEMA, role, "pw", grants, null);
        try {
            run.as(as(db, role));
        } finally {
            Grant.dropRole(db, role);
        }
        return seen;
    }

    /** A data source connecting to {@code db} as {@code role} with password {@code pw}. */
    public static DataSource as(TestDatabase db, String role) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(db.jdbcUrl());
        ds.setUser(role);
        ds.setPassword("pw");
        return ds;
    }
}
