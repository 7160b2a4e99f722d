/**
 * The CDC relay: outbox rows read from PostgreSQL's write-ahead log through Debezium Embedded and published to
 * Kafka at least once ({@link dev.outboxkit.relay.cdc.CdcRelay}, its options {@link dev.outboxkit.relay.cdc.CdcOptions}).
 * Packages named {@code internal} are not API.
 */
package dev.outboxkit.relay.cdc;
