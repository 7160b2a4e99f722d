package dev.outboxkit.relay.poller.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>Feeds the backlog gauges: the age of the oldest unpublished row (cheap: first row by seq) and
 * the number of unpublished rows (a count, given up after two seconds on huge tables).
 */
public final class BacklogProbe {

    private static final Logger log = LoggerFactory.getLogger(BacklogProbe.class);

    private final DataSource dataSource;
    private final PollerSql sql;
    private final RelayMetrics metrics;
    private volatile boolean warned;

    public BacklogProbe(DataSource dataSource, PollerSql sql, RelayMetrics metrics) {
        this.dataSource = dataSource;
        this.sql = sql;
        this.metrics = metrics;
    }

    /** Measures the oldest row's age. Never throws. */
    public void age() {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            Jdbc.setTimeouts(c, 1000);
            try (PreparedStatement ps = c.prepareStatement(sql.oldestAge); ResultSet rs = ps.executeQuery()) {
                metrics.oldestAge(rs.next() ? Duration.ofNanos((long) (rs.getDouble(1) * 1e9)) : Duration.ZERO);
            }
            c.commit();
        } catch (SQLException e) {
            note(e);
        }
    }

    /** Counts the backlog. Never throws. */
    public void count() {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement t = c.prepareStatement("SELECT set_config('statement_timeout', '2000', true)")) {
                t.executeQuery().close();
            }
            try (PreparedStatement ps = c.prepareStatement(sql.backlogCount); ResultSet rs = ps.executeQuery()) {
                rs.next();
                metrics.backlog(rs.getLong(1));
            }
            c.commit();
        } catch (SQLException e) {
            note(e);
        }
    }

    private void note(SQLException e) {
        if (!warned) {
            warned = true;
            log.warn("backlog metrics could not be read ({}); the gauges keep their last value", e.getMessage());
        }
    }
}
