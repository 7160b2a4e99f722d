/**
 * What both relays have in common and a user types: the {@link dev.outboxkit.relay.Relay} lifecycle, the builder's
 * shared settings, the option definitions the CLI and Spring derive from, the metric catalog, the producer settings
 * a relay accepts, the failure classes, and the one mapping from an outbox event to a Kafka record.
 */
package dev.outboxkit.relay;
