package dev.outboxkit.ops.reconcile;

import java.util.Objects;

/**
 * One anomaly found by {@link Reconciler}.
 *
 * @param kind    what was found
 * @param where   which side: {@code producer} (the outbox database), or {@code <consumer>/<group>} (external effects:
 *                {@code <consumer>})
 * @param subject what it is about: an event id, {@code <effect>/<event id>} or {@code <scope>/<key>}
 * @param detail  one line for a person (ages, states); never a payload
 */
public record Finding(Kind kind, String where, String subject, String detail) {

    /** The kinds of anomaly, each counted in {@code outbox.reconcile.findings{kind=…}}. */
    public enum Kind {
        /** An intent older than the grace period without an effect in a group (lost, or stuck unpublished). */
        LOST,
        /** An effect (processed_event row) whose event id is nowhere in the intent ledger. */
        PHANTOM,
        /** An external effect performed again after an attempt with an unknown outcome (attempt &gt; 1, succeeded). */
        DUPLICATE_EFFECT,
        /** An effect applied later than the dedupe window after its intent was created. */
        LATE_ARRIVAL,
        /** An idempotency key in progress past its lease, or an external effect whose outcome is unknown. */
        UNKNOWN_OUTCOME
    }

    public Finding {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(where, "where");
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(detail, "detail");
    }
}
