package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * N clients, each on its own connection, running one transaction after another as fast as the
 * database lets them: the way to measure commits/s. A warm-up is run and not counted; then the
 * commits of a timed window are counted. Deadlocks and serialization failures are rolled back
 * and retried (counted apart); any other error stops the run and is thrown.
 */
public final class ClosedLoop {

    private ClosedLoop() {
    }

    /** One client's transaction body; {@link ClosedLoop} commits after it returns. */
    @FunctionalInterface
    public interface Client {
        void transaction() throws SQLException;
    }

    /** Opens a client on a connection (autocommit off): prepare statements here. */
    @FunctionalInterface
    public interface ClientFactory {
        Client open(Connection connection) throws SQLException;
    }

    /** A client that runs its transactions itself (an application under test, such as the Spring Modulith peer). */
    public interface Session extends AutoCloseable {
        /** One whole transaction; false when it was rolled back for a conflict and counts as a retry. */
        boolean transaction() throws Exception;

        @Override
        default void close() throws Exception {
        }
    }

    /** Opens one client's session (its connection, statements, ...). */
    @FunctionalInterface
    public interface SessionFactory {
        Session open() throws Exception;
    }

    /**
     * @param commits commits inside the timed window
     * @param retries transactions rolled back for a deadlock or serialization failure, whole run
     * @param seconds length of the timed window
     */
    public record Result(int clients, long commits, long retries, double seconds) {
        public double perSecond() {
            return commits / seconds;
        }
    }

    /** Commits/s of {@code clients} JDBC clients, each on its own connection of {@code db}. */
    public static Result run(TestDatabase db, int clients, Duration warmup, Duration window, ClientFactory factory)
            throws Exception {
        return run(clients, warmup, window, () -> {
            Connection c = db.connect();
            try {
                c.setAutoCommit(false);
                Client client = factory.open(c);
                return new Session() {
                    @Override
                    public boolean transaction() throws SQLException {
                        try {
                            client.transaction();
                            c.commit();
                            return true;
                        } catch (SQLException e) {
                            c.rollback();
                            if (!retryable(e)) {
                                throw e;
                            }
                            return false;
                        }
                    }

                    @Override
                    public void close() throws SQLException {
                        c.close();
                    }
                };
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
        });
    }

    /** Commits/s of {@code clients} sessions, each in its own thread, over the timed window after the warm-up. */
    public static Result run(int clients, Duration warmup, Duration window, SessionFactory factory) throws Exception {
        LongAdder commits = new LongAdder();
        LongAdder retries = new LongAdder();
        AtomicReference<Exception> failure = new AtomicReference<>();
        CountDownLatch ready = new CountDownLatch(clients);
        List<Thread> threads = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        for (int i = 0; i < clients; i++) {
            Thread t = new Thread(() -> {
                try (Session session = factory.open()) {
                    ready.countDown();
                    while (!stop.get()) {
                        if (session.transaction()) {
                            commits.increment();
                        } else {
                            retries.increment();
                        }
                    }
                } catch (Exception e) {
                    failure.compareAndSet(null, e);
                    stop.set(true);
                    ready.countDown();
                }
            }, "closed-loop-client-" + i);
            threads.add(t);
            t.start();
        }
        try {
            ready.await();
            pause(warmup);
            long c0 = commits.sum();
            long t0 = System.nanoTime();
            pause(window);
            long c1 = commits.sum();
            long t1 = System.nanoTime();
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("a client failed: " + failure.get().getMessage(), failure.get());
            }
            return new Result(clients, c1 - c0, retries.sum(), (t1 - t0) / 1e9);
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(60_000);
            }
        }
    }

    /** 40001 serialization failure, 40P01 deadlock: try again. */
    static boolean retryable(SQLException e) {
        String state = e.getSQLState();
        return "40001".equals(state) || "40P01".equals(state);
    }

    /** The harness's own timing: the load runs in other threads while this one waits out the window. */
    static void pause(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }
}
