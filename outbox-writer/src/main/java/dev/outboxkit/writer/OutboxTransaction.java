package dev.outboxkit.writer;

import dev.outboxkit.writer.internal.PreparedEvent;
import dev.outboxkit.writer.internal.WriteFailures;
import dev.outboxkit.writer.spi.RoundTrip;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * The events of one transaction, buffered until {@link #flush()} or {@link #commit()}. Obtained
 * from {@link OutboxWriter#begin(Connection)}; use it on the connection's thread only, like the
 * connection itself, and close it (try-with-resources): closing rolls back a transaction that was
 * neither committed nor rolled back.
 *
 * <pre>{@code
 * connection.setAutoCommit(false);
 * try (OutboxTransaction tx = writer.begin(connection)) {
 *     updateBalances(connection);                       // your statements, as usual
 *     tx.add(OutboxMessage.builder("account", id, "MoneySent").payload(event).build());
 *     tx.commit();                                      // events + COMMIT: one round trip
 * }
 * }</pre>
 *
 * <p>{@link #commit()} sends the buffered INSERTs and the COMMIT as one pipelined request, so
 * the outbox costs no extra round trip. Afterwards the connection is idle with autocommit still
 * off, exactly as after {@link Connection#commit()}, and may start the next transaction.
 */
public final class OutboxTransaction implements AutoCloseable {

    private enum State { OPEN, COMMITTED, ROLLED_BACK, FAILED }

    private final OutboxWriter writer;
    private final Connection connection;
    private final List<PreparedEvent> buffer = new ArrayList<>();
    private final List<UUID> written = new ArrayList<>();
    private State state = State.OPEN;

    OutboxTransaction(OutboxWriter writer, Connection connection) {
        this.writer = writer;
        this.connection = connection;
    }

    /** The connection this transaction runs on. */
    public Connection connection() {
        return connection;
    }

    /**
     * Validates and buffers one event; nothing is sent yet.
     *
     * @return the event id
     * @throws dev.outboxkit.core.InvalidEventException when the event is invalid (not buffered)
     * @throws IllegalStateException                    after commit, rollback or close
     */
    public UUID add(OutboxMessage message) {
        requireOpen("add");
        PreparedEvent event = writer.prepare(message);
        buffer.add(event);
        return event.id();
    }

    /** Events buffered and not yet sent. */
    public int pending() {
        return buffer.size();
    }

    /**
     * Sends the buffered events now, in the transaction, without committing: one round trip (per
     * {@value OutboxWriter#EVENTS_PER_ROUND_TRIP} events). Useful before reading them back. If it
     * fails, the transaction is rolled back and the exception thrown.
     *
     * @return ids of the events sent by this call
     */
    public List<UUID> flush() throws SQLException {
        requireOpen("flush");
        List<UUID> ids = new ArrayList<>(buffer.size());
        try {
            for (RoundTrip p : writer.roundTrips(buffer, null, false)) {
                writer.execute(connection, p, writer.metrics.flushRoundTrips);
            }
        } catch (SQLException e) {
            rollbackAfter(e);
            throw e;
        }
        for (PreparedEvent event : buffer) {
            ids.add(event.id());
        }
        writer.metrics.events.increment(buffer.size());
        written.addAll(ids);
        buffer.clear();
        return ids;
    }

    /**
     * Sends the buffered events and the COMMIT in one round trip.
     *
     * @return ids of every event of this transaction
     * @throws CommitOutcomeUnknownException when the connection failed after the COMMIT was sent:
     *                                       it may or may not have committed
     * @throws SQLException                  when the database refused a statement or the commit:
     *                                       nothing was committed and the transaction is rolled back
     */
    public List<UUID> commit() throws SQLException {
        return commit(null);
    }

    /** Commits with {@code head}'s statements first in the committing round trip (for idempotency keys). */
    List<UUID> commit(RoundTrip head) throws SQLException {
        requireOpen("commit");
        if (WriteFailures.transactionAborted(connection)) {
            rollbackAfter(null);
            writer.metrics.failed.increment();
            throw new SQLException("cannot commit: an earlier statement in this transaction failed, so PostgreSQL already "
                    + "aborted it; it was rolled back and nothing was committed. Find the statement that failed before commit()",
                    "25P02");
        }
        boolean commitSent = false;
        try {
            List<RoundTrip> pipelines = writer.roundTrips(buffer, head, true);
            for (RoundTrip p : pipelines) {
                commitSent = p.commits();
                writer.execute(connection, p, writer.metrics.commitRoundTrips);
            }
            // pgjdbc is idle now, so this sends nothing; it keeps pools and frameworks that track
            // commit() calls (HikariCP's dirty flag) in step.
            connection.commit();
        } catch (SQLException e) {
            if (commitSent && WriteFailures.sessionLost(e, connection)) {
                state = State.FAILED;
                writer.metrics.unknown.increment();
                throw new CommitOutcomeUnknownException("the connection failed while the transaction was committing, so it "
                        + "may or may not have committed (" + e.getMessage() + "). Do not guess: check for the effect, or retry "
                        + "with the same idempotency key", e);
            }
            rollbackAfter(e);
            writer.metrics.failed.increment();
            throw e;
        }
        for (PreparedEvent event : buffer) {
            written.add(event.id());
        }
        writer.metrics.events.increment(buffer.size());
        writer.metrics.committed.increment();
        buffer.clear();
        state = State.COMMITTED;
        return List.copyOf(written);
    }

    /** Drops the buffered events and rolls the connection's transaction back. */
    public void rollback() throws SQLException {
        requireOpen("rollback");
        buffer.clear();
        state = State.ROLLED_BACK;
        connection.rollback();
    }

    /** Rolls back if neither {@link #commit()} nor {@link #rollback()} ran; otherwise does nothing. */
    @Override
    public void close() throws SQLException {
        if (state == State.OPEN) {
            rollback();
        }
    }

    boolean isOpen() {
        return state == State.OPEN;
    }

    /** Rolls back after a failure; a failing rollback is added to {@code cause} instead of thrown. */
    void rollbackAfter(Throwable cause) {
        buffer.clear();
        if (state != State.OPEN) {
            return;
        }
        state = State.ROLLED_BACK;
        try {
            if (!connection.isClosed()) {
                connection.rollback();
            }
        } catch (SQLException e) {
            state = State.FAILED;
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }

    private void requireOpen(String operation) {
        Objects.requireNonNull(operation);
        if (state != State.OPEN) {
            throw new IllegalStateException("cannot " + operation + ": this outbox transaction was already "
                    + state.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ')
                    + "; start a new one with OutboxWriter.begin(connection)");
        }
    }
}
