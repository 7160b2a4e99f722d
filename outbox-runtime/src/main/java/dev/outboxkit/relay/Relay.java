package dev.outboxkit.relay;

/**
 * What the sidecar needs from a relay, whichever kind: start it, ask how it is, stop it.
 * {@link #close()} finishes the batch in flight, releases leases and returns.
 */
public interface Relay extends AutoCloseable {

    /** Starts the relay's threads and returns; failures to start are thrown. */
    void start();

    /** Liveness and readiness, for {@code /health/live} and {@code /health/ready}. */
    Health health();

    /** Graceful stop: the batch in flight is finished (or abandoned unacknowledged), leases released. */
    @Override
    void close();

    /**
     * @param live   the relay's threads are running (false: restart the process); never false because a
     *               dependency is down, since a restart does not fix it
     * @param ready  it could publish now, busy or idle: database and Kafka answer (Kafka asked directly, see
     *               {@code KafkaReachability}), and it holds work or stands by as a healthy standby
     * @param detail one line for humans, never secrets
     */
    record Health(boolean live, boolean ready, String detail) {
    }
}
