package dev.outboxkit.testkit;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Commits rows of a table {@code t (id bigint PRIMARY KEY)}, one per transaction, and remembers what each commit was
 * told: acknowledged, or in doubt when the connection died around it. For tests that crash a server under writes.
 */
final class RowWriter {

    /** One writing thread, started by {@link #start()}. */
    record Writing(Thread thread, AtomicBoolean failed) {

        /** Waits for the thread to end; true when it ended because its connection failed. */
        boolean endedByFailure(Duration atMost) throws InterruptedException {
            thread.join(atMost.toMillis());
            return !thread.isAlive() && failed.get();
        }
    }

    private final TestDatabase db;
    private final AtomicLong ids = new AtomicLong();
    private final Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
    private final Set<Long> inDoubt = ConcurrentHashMap.newKeySet();

    private RowWriter(TestDatabase db) {
        this.db = db;
    }

    /** Creates table {@code t} in {@code db}. */
    static RowWriter onNewTable(TestDatabase db) throws SQLException {
        db.exec("CREATE TABLE t (id bigint PRIMARY KEY)");
        return new RowWriter(db);
    }

    /** A thread committing on one connection of the database's URL until that connection fails. */
    Writing start() {
        AtomicBoolean failed = new AtomicBoolean();
        Thread thread = new Thread(() -> {
            try (Connection c = db.connect()) {
                while (true) {
                    long id = ids.incrementAndGet();
                    try {
                        insert(c, id);
                    } catch (SQLException e) {
                        inDoubt.add(id); // the connection died around this commit
                        failed.set(true);
                        return;
                    }
                }
            } catch (SQLException e) {
                failed.set(true);
            }
        }, "writer");
        thread.start();
        return new Writing(thread, failed);
    }

    /** Commits one more row on {@code c} (which may reach the database another way); returns its id. */
    long insertOne(Connection c) throws SQLException {
        long id = ids.incrementAndGet();
        insert(c, id);
        return id;
    }

    private void insert(Connection c, long id) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO t VALUES (" + id + ")");
        }
        acknowledged.add(id);
    }

    int acknowledged() {
        return acknowledged.size();
    }

    Set<Long> acknowledgedIds() {
        return Set.copyOf(acknowledged);
    }

    int inDoubt() {
        return inDoubt.size();
    }

    /** The ids in the table now (read through the database's URL). */
    Set<Long> present() throws SQLException {
        Set<Long> present = new HashSet<>();
        try (Connection c = db.connect()) {
            for (String id : Sql.strings(c, "SELECT id FROM t")) {
                present.add(Long.parseLong(id));
            }
        }
        return present;
    }

    /** Rows present that no commit was told about: neither acknowledged nor in doubt. */
    Set<Long> unexplained(Set<Long> present) {
        Set<Long> unexplained = new HashSet<>(present);
        unexplained.removeAll(acknowledged);
        unexplained.removeAll(inDoubt);
        return unexplained;
    }
}
