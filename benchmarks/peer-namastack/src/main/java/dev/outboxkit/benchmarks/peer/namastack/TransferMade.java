package dev.outboxkit.benchmarks.peer.namastack;

/**
 * The payload the peer schedules: one per transaction, stored by namastack-outbox as JSON in
 * {@code outbox_record.payload} and handed back to {@link KafkaPublishingHandler}, which sends it to Kafka as JSON,
 * so the event id travels in the record value ({@code "id"}), as with the Spring Modulith peer.
 *
 * @param id          the event id the benchmark tracks (a UUID string)
 * @param aggregateId the account: namastack's record key (records of one key are processed in order) and the
 *                    Kafka key
 * @param n           the benchmark's sequence number of the event
 * @param payload     the benchmark's JSON payload, as a string
 */
public record TransferMade(String id, String aggregateId, long n, String payload) {
}
