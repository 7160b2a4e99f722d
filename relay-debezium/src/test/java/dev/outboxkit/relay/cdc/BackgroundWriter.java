package dev.outboxkit.relay.cdc;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A producer that keeps committing small transactions of outbox rows with plain SQL, recording each
 * event in a {@link History} (per aggregate in commit order; one writer thread, so commit order is
 * the order of this loop).
 */
final class BackgroundWriter implements AutoCloseable {

    private final TestDatabase db;
    private final History history;
    private final String topic;
    private final int aggregates;
    private final long pauseMillis;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong committed = new AtomicLong();
    private final long[] order;
    private final Thread thread;
    private volatile Throwable failure;

    BackgroundWriter(TestDatabase db, History history, String topic, int aggregates, long pauseMillis) {
        this.db = db;
        this.history = history;
        this.topic = topic;
        this.aggregates = aggregates;
        this.pauseMillis = pauseMillis;
        this.order = new long[aggregates];
        this.thread = new Thread(this::run, "background-writer");
        thread.setDaemon(true);
        thread.start();
    }

    long committed() {
        return committed.get();
    }

    private void run() {
        Random random = new Random(42);
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, "
                + "aggregate_type, aggregate_id, event_type, topic, payload) VALUES (?, 'order', ?, 'OrderChanged', ?, ?::jsonb)")) {
            c.setAutoCommit(false);
            while (running.get()) {
                int size = 1 + random.nextInt(4);
                List<Object[]> events = new ArrayList<>();
                for (int i = 0; i < size; i++) {
                    int agg = random.nextInt(aggregates);
                    UUID id = EventIds.next();
                    long n = ++order[agg];
                    events.add(new Object[] {id, "agg-" + agg, n});
                    ps.setObject(1, id);
                    ps.setString(2, "agg-" + agg);
                    ps.setString(3, topic);
                    ps.setString(4, "{\"aggregate\": \"agg-" + agg + "\", \"n\": " + n + "}");
                    ps.addBatch();
                }
                ps.executeBatch();
                try {
                    c.commit();
                } catch (SQLException e) {
                    for (Object[] ev : events) {
                        history.inDoubt((UUID) ev[0], (String) ev[1], (Long) ev[2]);
                    }
                    throw e;
                }
                for (Object[] ev : events) {
                    history.committed((UUID) ev[0], (String) ev[1], (Long) ev[2]);
                }
                committed.addAndGet(size);
                if (pauseMillis > 0) {
                    TimeUnit.MILLISECONDS.sleep(pauseMillis); // pacing: the write rate the test asks for
                }
            }
        } catch (SQLException | RuntimeException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops writing and waits for the loop to end; throws if the writer failed. */
    @Override
    public void close() {
        running.set(false);
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            throw new AssertionError("the background writer failed: " + failure, failure);
        }
    }
}
