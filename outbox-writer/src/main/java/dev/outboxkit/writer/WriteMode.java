package dev.outboxkit.writer;

/**
 * How the writer records events. The trade-off is where unpublished events live.
 *
 * <table>
 *   <caption>write modes</caption>
 *   <tr><th>mode</th><th>what a transaction writes</th><th>relays that can publish it</th>
 *       <th>if the replication slot is lost</th></tr>
 *   <tr><td>{@link #KEEP} (default)</td><td>rows in {@code outbox_event}; a relay deletes or marks
 *       them after Kafka acknowledged them</td><td>polling relay and CDC relay</td>
 *       <td>nothing is lost: the polling relay drains what the CDC relay missed</td></tr>
 *   <tr><td>{@link #INSERT_AND_DELETE}</td><td>rows inserted and deleted again in the same
 *       transaction: the table stays empty, the WAL keeps the inserts</td><td>CDC relay only</td>
 *       <td>unpublished events are lost</td></tr>
 *   <tr><td>{@link #LOGICAL_MESSAGE}</td><td>one transactional logical decoding message per event
 *       ({@code pg_logical_emit_message}, prefix and body in
 *       {@link dev.outboxkit.core.LogicalMessages}); no table at all</td><td>CDC relay only</td>
 *       <td>unpublished events are lost</td></tr>
 * </table>
 *
 * <p>In every mode each event is its own statement (and so its own WAL record with its own LSN),
 * pipelined with the others in one network round trip; never one multi-row statement, because
 * Debezium 3.6 may skip changes that share an LSN after a restart (fixed in 3.7, PR 7531).
 */
public enum WriteMode {
    /** Rows stay in {@code outbox_event} until a relay removes them. Needs INSERT on the table. */
    KEEP,
    /** Insert then delete in the same transaction; only the WAL holds the event. Needs INSERT, SELECT and DELETE. */
    INSERT_AND_DELETE,
    /** {@code pg_logical_emit_message(true, 'outboxkit', body)}; no table. Needs EXECUTE on that function. */
    LOGICAL_MESSAGE
}
