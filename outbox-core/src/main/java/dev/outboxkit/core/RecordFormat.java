package dev.outboxkit.core;

/**
 * How the relays' record mapping ({@code dev.outboxkit.relay.KafkaRecords} in outbox-runtime) lays out an event's metadata in the Kafka record. The key (aggregate id), the value
 * (payload) and the row's own headers are the same in both; only the metadata headers differ.
 */
public enum RecordFormat {
    /** Headers {@code id}, {@code eventType}, {@code aggregateType}, {@code createdAt}: the default. */
    OUTBOXKIT,
    /**
     * The CloudEvents 1.0 Kafka protocol binding in binary mode: {@code ce_specversion}, {@code ce_id},
     * {@code ce_source}, {@code ce_type}, {@code ce_time}, {@code ce_subject}, {@code ce_aggregatetype} and
     * {@code content-type} (named in {@code dev.outboxkit.relay.CloudEventsHeaders}).
     */
    CLOUDEVENTS
}
