package dev.outboxkit.writer.spi;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Not API: public for the writer and idempotency keys in {@code dev.outboxkit.writer}.
 *
 * <p>Several SQL statements sent as one prepared, multi-statement query: pgjdbc sends them with the
 * extended protocol and a single Sync, so they cost one network round trip. PostgreSQL runs them
 * in order; after the first error it skips the rest up to the Sync, so a trailing COMMIT never
 * runs after a failed statement.
 *
 * <p>Every statement must have no result or a fixed-width one (int, uuid, pg_lsn, void): pgjdbc
 * may insert an extra Sync before a statement whose result rows it cannot size.
 */
public final class RoundTrip {

    /** Binds a statement's parameters starting at {@code next}; returns the next free index. */
    @FunctionalInterface
    public interface Binder {
        int bind(PreparedStatement ps, int next) throws SQLException;
    }

    private final StringBuilder sql = new StringBuilder();
    private final List<Binder> binders = new ArrayList<>();
    private boolean commits;

    public RoundTrip add(String statement, Binder binder) {
        if (!binders.isEmpty()) {
            sql.append(";\n");
        }
        sql.append(statement);
        binders.add(binder);
        return this;
    }

    /** Appends the statements of {@code other}. */
    public RoundTrip addAll(RoundTrip other) {
        if (other.commits) {
            throw new IllegalStateException("cannot append a pipeline that commits");
        }
        if (!other.binders.isEmpty()) {
            if (!binders.isEmpty()) {
                sql.append(";\n");
            }
            sql.append(other.sql);
            binders.addAll(other.binders);
        }
        return this;
    }

    /** Ends the pipeline with COMMIT. */
    public RoundTrip commit() {
        add("COMMIT", (ps, next) -> next);
        commits = true;
        return this;
    }

    public boolean commits() {
        return commits;
    }

    public boolean isEmpty() {
        return binders.isEmpty();
    }

    public int statements() {
        return binders.size();
    }

    public String sql() {
        return sql.toString();
    }

    /** Sends every statement in one round trip; throws the first statement's error, if any. */
    public void execute(Connection c) throws SQLException {
        if (binders.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            int next = 1;
            for (Binder binder : binders) {
                next = binder.bind(ps, next);
            }
            ps.execute();
        }
    }
}
