package dev.outboxkit.benchmarks.peer.modulith;

import org.springframework.modulith.events.Externalized;

/**
 * The domain event of the peer: one per transaction, selected for Kafka by {@link Externalized} (the
 * documented way); its topic and key come from {@link PeerApplication#externalization}. Serialised to JSON by
 * Spring Modulith's Kafka support, so the event id travels in the record value ({@code "id"}).
 *
 * @param id          the event id the benchmark tracks (a UUID string)
 * @param aggregateId the account, also the Kafka key (per-aggregate order, like outboxkit's relays)
 * @param n           the benchmark's sequence number of the event
 * @param payload     the benchmark's JSON payload, as a string
 */
@Externalized
public record TransferMade(String id, String aggregateId, long n, String payload) {
}
