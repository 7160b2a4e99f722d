package dev.outboxkit.relay;

import java.util.Locale;

/**
 * What a failed publication of an outbox event means, the same for both relays. Every exception a
 * relay sees from the mapping or from Kafka falls into exactly one of these (the table is in the
 * README, "Failure classification"); the lower-case {@link #tag()} names it in logs, health details
 * and metric tags.
 */
public enum PublishFailure {

    /**
     * Transient: Kafka is slow, away or moving leaders. The event stays in {@code outbox_event} and is
     * sent again after a back-off; nothing is dropped. An unknown exception is retriable too, because
     * retrying never loses an event while parking one on a guess would.
     */
    RETRIABLE,

    /**
     * This event can never be published as it is (too large, an illegal topic, a row the mapping
     * refuses). It is parked in {@code outbox_dead_letter} with its reason and the relay goes on with
     * the rest; {@code outbox dead-letters retry} puts it back once it was fixed.
     */
    POISON,

    /**
     * Needs an operator: authentication, authorization, a broker or topic that does not support what the
     * producer needs, a client misconfiguration. The event is fine, so it is neither parked nor counted as
     * an attempt: it stays in {@code outbox_event}, the relay keeps retrying with a back-off, reports not
     * ready with the reason, and carries on by itself once the cause is fixed.
     */
    FATAL,

    /**
     * This instance lost its lease ({@link dev.outboxkit.core.FencedException}): a newer holder owns the work. Nothing is
     * written under the old token; the instance steps down and competes for the lease again.
     */
    FENCED;

    /** The lower-case name, for logs, health details and metric tags: {@code retriable}, {@code poison}, … */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
