/**
 * The contract every part shares: the event model, event ids, the Kafka record mapping and header names,
 * identifier validation, and what both relays have in common (options, metrics, failure classes, the
 * {@link dev.outboxkit.core.Relay} lifecycle). Packages named {@code internal} are not API.
 */
package dev.outboxkit.core;
