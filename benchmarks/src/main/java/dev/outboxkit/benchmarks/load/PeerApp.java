package dev.outboxkit.benchmarks.load;

import java.util.UUID;

/**
 * A peer application the drivers call like outboxkit's writer: its own transactions write the event (and the
 * business rows), its own machinery publishes it. {@link ModulithPeer} and {@link NamastackPeer}.
 */
public interface PeerApp extends AutoCloseable {

    /** One transaction publishing one event. */
    void publish(UUID id, String aggregateId, long n, String payload) throws Exception;

    /** One transfer (two account updates) with its event, or without one when {@code id} is null. */
    void transfer(int from, int to, long amount, UUID id, String aggregateId, long n, String payload) throws Exception;

    /** One transaction with a {@code crash_committed} row and its event. */
    void publishRecorded(UUID id, String aggregateId, long n, String payload) throws Exception;

    /** Between two latency rates: the housekeeping the peer's documentation asks of an application, if any. */
    default void betweenRates() throws Exception {
    }

    /** The peer named {@code system} ({@code modulith} or {@code namastack}), started and ready to publish. */
    static PeerApp start(String system, String jdbcUrl, String user, String password, String bootstrap, String topic)
            throws Exception {
        return switch (system) {
            case "modulith" -> ModulithPeer.start(jdbcUrl, user, password, bootstrap, topic);
            case "namastack" -> NamastackPeer.start(jdbcUrl, user, password, bootstrap, topic);
            default -> throw new IllegalArgumentException("no peer named " + system + "; peers: modulith, namastack");
        };
    }
}
