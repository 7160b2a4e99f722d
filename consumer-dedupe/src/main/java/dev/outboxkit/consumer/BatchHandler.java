package dev.outboxkit.consumer;

import java.sql.Connection;
import java.util.List;

/**
 * Applies the new events of one poll batch at once, so a handler can write them with one JDBC
 * batch or one set-based statement. Duplicates are already removed; the list is in poll order
 * (records of one partition in offset order). Same transaction rules as {@link EventHandler}:
 * write through {@code connection}, never commit, roll back or close it.
 *
 * <p>When the batch fails, the consumer rolls back and calls the handler again with one event
 * per transaction, so a single bad event is retried and dead-lettered on its own while the
 * others are applied.
 */
@FunctionalInterface
public interface BatchHandler {

    /** @param newEvents never empty; not modifiable */
    void handle(Connection connection, List<InboxEvent> newEvents) throws Exception;
}
