package dev.outboxkit.relay.poller;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Concurrent test producers. Each thread owns its aggregates, so per aggregate the commit order
 * is the order it writes in (as when writers serialise on the aggregate's row lock). Each
 * transaction writes 1 to 3 events of one aggregate; one in 20 is rolled back on purpose.
 */
final class Writers implements AutoCloseable {

    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicLong committed = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile Throwable error;

    /**
     * @param pauseMillis pause between a thread's transactions (0: as fast as it can)
     */
    Writers(TestDatabase db, History history, int threadCount, int aggregatesPerThread, long pauseMillis) {
        for (int t = 0; t < threadCount; t++) {
            int thread = t;
            Thread th = new Thread(() -> run(db, history, thread, aggregatesPerThread, pauseMillis), "writer-" + t);
            th.setDaemon(true);
            threads.add(th);
        }
        threads.forEach(Thread::start);
    }

    private void run(TestDatabase db, History history, int thread, int aggregates, long pauseMillis) {
        long[] next = new long[aggregates];
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Connection c = null;
        while (!stop.get()) {
            try {
                if (c == null) {
                    c = db.connect();
                    c.setAutoCommit(false);
                }
                int a = random.nextInt(aggregates);
                String aggregate = "w" + thread + "-a" + a;
                int events = 1 + random.nextInt(3);
                boolean rollBack = random.nextInt(20) == 0;
                List<UUID> ids = new ArrayList<>();
                for (int e = 0; e < events; e++) {
                    ids.add(OutboxRows.insert(c, "account", aggregate, "{\"thread\": " + thread + ", \"n\": " + (next[a] + e) + "}"));
                }
                if (rollBack) {
                    c.rollback();
                    ids.forEach(history::rolledBack);
                } else {
                    try {
                        c.commit();
                    } catch (SQLException e) {
                        // Outcome unknown: the transaction may or may not have committed.
                        for (int i = 0; i < ids.size(); i++) {
                            history.inDoubt(ids.get(i), aggregate, next[a] + i);
                        }
                        next[a] += ids.size();
                        throw e;
                    }
                    for (int i = 0; i < ids.size(); i++) {
                        history.committed(ids.get(i), aggregate, next[a] + i);
                    }
                    next[a] += ids.size();
                    committed.addAndGet(ids.size());
                }
                if (pauseMillis > 0) {
                    TimeUnit.MILLISECONDS.sleep(pauseMillis); // pacing: the write rate the test asks for
                }
            } catch (SQLException e) {
                // Statement failed before commit: rolled back, nothing to record. Reconnect.
                failures.incrementAndGet();
                closeQuietly(c);
                c = null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (RuntimeException e) {
                error = e;
                break;
            }
        }
        closeQuietly(c);
    }

    long committed() {
        return committed.get();
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
        if (error != null) {
            throw new IllegalStateException("a writer failed", error);
        }
    }

    private static void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // gone
            }
        }
    }
}
