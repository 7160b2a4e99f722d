/**
 * The polling relay: outbox rows claimed with {@code FOR UPDATE SKIP LOCKED} per owned partition and published to
 * Kafka at least once ({@link dev.outboxkit.relay.poller.PollingRelay}, its options
 * {@link dev.outboxkit.relay.poller.PollerOptions}). Packages named {@code internal} are not API.
 */
package dev.outboxkit.relay.poller;
