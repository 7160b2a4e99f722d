package dev.outboxkit.relay.poller.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>LISTENs on channel {@code outbox_event} (sent by the optional {@code outbox_event_notify}
 * trigger, payload = schema) and wakes the idle claim loop. Polling stays the safety net: a lost
 * notification only costs latency.
 */
public final class NotifyListener implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(NotifyListener.class);
    static final String CHANNEL = "outbox_event";

    private final DataSource dataSource;
    private final String schema;
    /** How logs name the relay ({@code poll relay <id>}). */
    private final String who;
    private final Waker waker;
    private volatile boolean stopped;

    public NotifyListener(DataSource dataSource, String schema, String who, Waker waker) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.who = who;
        this.waker = waker;
    }

    public void stop() {
        stopped = true;
    }

    @Override
    public void run() {
        while (!stopped) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(true);
                PGConnection pg = c.unwrap(PGConnection.class);
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + CHANNEL);
                }
                waker.wake(); // rows may have arrived while we were not listening
                try {
                    while (!stopped) {
                        PGNotification[] notes = pg.getNotifications(500);
                        if (notes != null) {
                            for (PGNotification n : notes) {
                                if (schema.equals(n.getParameter())) {
                                    waker.wake();
                                    break;
                                }
                            }
                        }
                    }
                } finally {
                    try (Statement s = c.createStatement()) {
                        s.execute("UNLISTEN *");
                    } catch (SQLException ignored) {
                        // the connection is gone with its LISTEN
                    }
                }
            } catch (SQLException e) {
                if (stopped) {
                    return;
                }
                log.warn("{}: LISTEN connection failed ({}); polling continues, reconnecting in 1 s",
                        who, e.getMessage());
                try {
                    TimeUnit.SECONDS.sleep(1);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
