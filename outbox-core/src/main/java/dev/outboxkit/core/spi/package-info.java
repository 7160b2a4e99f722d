/**
 * Not API: what outboxkit's own modules share beyond the contract — the grants each role needs and their check, the
 * transaction helper, the trace context the writer stores and the size limit the writer and the relays agree on. It
 * may change in any release.
 */
package dev.outboxkit.core.spi;
