package dev.outboxkit.testkit.internal;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Not API: the relays' handoff tests measure a handoff's gap as the worst delay (Kafka record timestamp minus the
 * event's {@code createdAt} header) of the events created while it happened: an event that had to wait for the
 * successor waited the whole gap.
 */
public final class Handoffs {

    /** One handoff: when the stop began and ended (epoch millis of this machine's clock). */
    public record Window(long fromMillis, long toMillis) {
    }

    /** Handoffs per test run: 3, or OUTBOXKIT_HANDOFFS from the environment (more for measuring). */
    public static final int COUNT = Integer.parseInt(System.getenv().getOrDefault("OUTBOXKIT_HANDOFFS", "3"));

    /** A relay to stop. */
    public interface Stoppable {
        void close() throws Exception;
    }

    private Handoffs() {
    }

    /**
     * Stops {@code relay} gracefully and returns the stop's window; fails unless the stop announced its lease release
     * on {@code listener} ({@link #listen}): without it the others learn of it only at their next look.
     */
    public static Window stop(Stoppable relay, Connection listener) throws Exception {
        forgetReleases(listener);
        long from = System.currentTimeMillis();
        relay.close();
        long to = System.currentTimeMillis();
        if (awaitRelease(listener, 5_000) < 0) {
            throw new AssertionError("the stop announced no lease release on " + RELEASED_CHANNEL);
        }
        return new Window(from, to);
    }

    /** A record's delay in ms: its timestamp (the producer's send time) minus its event's createdAt. */
    public static long delayMillis(ConsumerRecord<byte[], byte[]> r) {
        Header h = r.headers().lastHeader("createdAt");
        if (h == null) {
            throw new IllegalArgumentException("record at " + r.topic() + "-" + r.partition() + "@" + r.offset()
                    + " has no createdAt header: not an outboxkit record");
        }
        return r.timestamp() - Instant.parse(new String(h.value(), StandardCharsets.UTF_8)).toEpochMilli();
    }

    /**
     * The worst delay of the events created from {@code slackMillis} before each window's start to
     * {@code slackMillis} after its end, one figure per window.
     */
    public static List<Long> worstDelays(Collection<ConsumerRecord<byte[], byte[]>> records, List<Window> windows,
                                         long slackMillis) {
        List<Long> out = new ArrayList<>();
        for (Window w : windows) {
            long worst = 0;
            for (ConsumerRecord<byte[], byte[]> r : records) {
                long created = r.timestamp() - delayMillis(r);
                if (created >= w.fromMillis() - slackMillis && created <= w.toMillis() + slackMillis) {
                    worst = Math.max(worst, delayMillis(r));
                }
            }
            out.add(worst);
        }
        return out;
    }

    /** The relays' announcement of a lease release (outbox-core's {@code LeaseTable.RELEASED_CHANNEL}). */
    public static final String RELEASED_CHANNEL = "outboxkit_lease_released";

    /** Makes {@code c} LISTEN for lease releases; {@link #awaitRelease} then reports them. */
    public static void listen(Connection c) throws SQLException {
        c.setAutoCommit(true);
        try (Statement s = c.createStatement()) {
            s.execute("LISTEN " + RELEASED_CHANNEL);
        }
    }

    /**
     * When (epoch millis, on receipt) the first release announcement reached {@code c} since the last call, waiting
     * up to {@code timeoutMillis}; -1 when none came.
     */
    public static long awaitRelease(Connection c, int timeoutMillis) throws SQLException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        long left;
        while ((left = deadline - System.currentTimeMillis()) > 0) {
            PGNotification[] notes = c.unwrap(PGConnection.class).getNotifications((int) left);
            if (notes != null && notes.length > 0) {
                return System.currentTimeMillis();
            }
        }
        return -1;
    }

    /** Drops the announcements {@code c} received so far (a rebalance announces its releases too). */
    public static void forgetReleases(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT 1"); // reads what the server sent meanwhile
        }
        c.unwrap(PGConnection.class).getNotifications();
    }

    /** "p50 x ms, max y ms" of {@code millis}. */
    public static String summary(List<Long> millis) {
        List<Long> sorted = new ArrayList<>(millis);
        sorted.sort(null);
        return "p50 " + sorted.get(sorted.size() / 2) + " ms, max " + sorted.get(sorted.size() - 1) + " ms (" + millis + ")";
    }
}
