package dev.outboxkit.ops.admin;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One row of the operations journal ({@code outbox_ops_journal}, schema version 12): a reconciliation run, a retention
 * round or an operator's action on dead letters, as {@link OutboxAdmin#journal} reads it.
 *
 * @param id         order of entry
 * @param kind       what ran
 * @param startedAt  when it started
 * @param finishedAt when it finished
 * @param actor      who: the operator's name for an action, otherwise the tool and host that ran it
 * @param outcome    success or failure
 * @param summary    one line a person reads
 * @param detail     the bounded JSON detail as maps, lists, strings, numbers and booleans (empty when there is none):
 *                   for {@link Kind#RECONCILE} {@code counts} (per finding kind) and {@code findings} (the first ones:
 *                   {@code kind}, {@code where}, {@code subject}, {@code eventId} when the subject names one,
 *                   {@code detail}); for {@link Kind#RETENTION} {@code purged} (per store) and, when a schedule ran it,
 *                   {@code interval}; for the actions {@code selection}, {@code count} and the first {@code ids}; on
 *                   failure {@code error} and {@code message}. Never a payload.
 */
public record JournalEntry(long id, Kind kind, Instant startedAt, Instant finishedAt, String actor, Outcome outcome,
                           String summary, Map<String, Object> detail) {

    /** What ran; {@link #code()} is the {@code kind} column's value. */
    public enum Kind {
        /** A reconciliation run ({@code outbox reconcile}, {@code Reconciler.run}). */
        RECONCILE("reconcile"),
        /** A retention round that purged ({@code outbox purge}, a {@code RetentionSchedule} round); dry runs are not recorded. */
        RETENTION("retention"),
        /** Dead letters moved back into the outbox ({@link OutboxAdmin#retryDeadLetters}). */
        DEAD_LETTER_RETRY("dead-letter-retry"),
        /** Dead letters deleted for good ({@link OutboxAdmin#discardDeadLetters}). */
        DEAD_LETTER_DISCARD("dead-letter-discard");

        private final String code;

        Kind(String code) {
            this.code = code;
        }

        /** The value stored in the {@code kind} column. */
        public String code() {
            return code;
        }

        /**
         * The kind stored as {@code code}.
         *
         * @throws IllegalArgumentException naming the known codes
         */
        public static Kind ofCode(String code) {
            for (Kind k : values()) {
                if (k.code.equals(code)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown journal kind '" + code + "'; known: reconcile, retention,"
                    + " dead-letter-retry, dead-letter-discard");
        }
    }

    /** How it ended; {@link #code()} is the {@code outcome} column's value. */
    public enum Outcome {
        SUCCESS, FAILURE;

        /** The value stored in the {@code outcome} column. */
        public String code() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public JournalEntry {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(outcome, "outcome");
        detail = detail == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(detail));
    }

    /**
     * When the next retention round is due: {@link #finishedAt} plus the schedule's interval recorded in the detail.
     * Empty for other kinds and for a round no schedule ran ({@code outbox purge}).
     */
    public Optional<Instant> nextRoundDue() {
        if (kind != Kind.RETENTION || !(detail.get("interval") instanceof String interval)) {
            return Optional.empty();
        }
        try {
            return Optional.of(finishedAt.plus(Duration.parse(interval)));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }
}
