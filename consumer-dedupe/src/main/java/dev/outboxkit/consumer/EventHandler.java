package dev.outboxkit.consumer;

import java.sql.Connection;

/**
 * Applies one new event. Called inside the consumer's database transaction, after the event's id
 * was recorded in {@code processed_event}: do every database write through {@code connection} and
 * do not commit, roll back or close it. Throwing rolls the whole transaction back (the id
 * included), so the event is retried and, if it keeps failing, sent to the dead-letter topic.
 */
@FunctionalInterface
public interface EventHandler {

    void handle(Connection connection, InboxEvent event) throws Exception;
}
