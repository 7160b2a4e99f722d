/**
 * Not API: the runtime outboxkit's own modules share (both relays, the consumer, the CLI, Spring) — leases and
 * fencing, liveness, start-up checks, failure classification, dead letters, connection pools, metrics and tracing.
 * It may change in any release; applications use the relays' and the consumer's builders instead.
 */
package dev.outboxkit.runtime;
