package dev.outboxkit.console.internal;

import dev.outboxkit.console.ConsoleRequest;
import dev.outboxkit.ops.admin.CdcRelaySlot;
import dev.outboxkit.ops.admin.DeadLetter;
import dev.outboxkit.ops.admin.DeadLetterChange;
import dev.outboxkit.ops.admin.EventTrace;
import dev.outboxkit.ops.admin.IdempotencyKeyState;
import dev.outboxkit.ops.admin.RelayMember;
import dev.outboxkit.ops.admin.Status;
import dev.outboxkit.relay.Relay;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** Not API: what the templates render, one record per page or part. */
public final class Views {

    private Views() {
    }

    /**
     * What every page's frame needs.
     *
     * @param operator the logged-in operator; null: nobody
     * @param csrf     the CSRF token for the page's forms; null when nobody is logged in
     * @param canWrite write actions are on and an operator is logged in: the page offers them
     * @param hostCsrf the host framework's CSRF token every form carries too; null when the host checks none
     */
    public record Page(String title, String base, String nav, String operator, String csrf, boolean writeActions,
                       boolean loginOn, boolean canWrite, ConsoleRequest.HostCsrf hostCsrf) {
    }

    /**
     * A relay instance as the lease, member and report tables show it. Role: {@code holder} while it holds a valid lease,
     * {@code standby} while it is alive (a live member, or a live report) without one, {@code gone} when it holds no
     * valid lease and is neither (crashed, paused, or stopped without cleaning up).
     *
     * @param member its membership row; null for an instance that registers none (the CDC relay) or left
     * @param report what it last reported of itself (readiness, what it published); null when it writes no report (a
     *               schema older than version 13, or a relay of an older version) or stopped cleanly
     */
    public record Instance(String name, String role, long valid, List<Status.Lease> leases, RelayMember member,
                           dev.outboxkit.ops.admin.RelayReport report) {
    }

    /** Where the charted publish rate comes from: every relay instance's report, or the relays of this process. */
    public enum RateSource { FLEET, PROCESS }

    /**
     * The overview; {@code error} or {@code cdcError} say what could not be read.
     *
     * @param statusTook  how long the database took to answer the status (or to fail)
     * @param byPartition the head of the backlog by polling relay lease key; empty without a live polling relay
     * @param reportsKept the schema keeps the relays' reports (version 13 or later); true when the status could not be read
     * @param publishRate   where the charted publish rate comes from: every instance's report ({@code FLEET}), the relays
     *                      in this process ({@code PROCESS}); null: nowhere (no reports, no relay in this process)
     * @param lastPublished the sample at which those relays were last seen to have published; null: not yet, or unknown
     */
    public record Overview(Status status, String error, Duration statusTook, List<Instance> instances,
                           java.util.Map<String, dev.outboxkit.ops.admin.PartitionBacklog> byPartition, boolean reportsKept,
                           List<CdcRelaySlot> cdcSlots, String cdcError, Relay.Health health, RateSource publishRate,
                           Instant lastPublished, Instant readAt) {
    }

    /**
     * Dead letters sharing one reason.
     *
     * @param rowsHref where the page loads the rows from after it is shown (they cost a query per reason); null when
     *                 {@code rows} holds them
     * @param moreHref the next rows of this reason (its own page); null when all are listed
     */
    public record Group(String errorClass, String message, long count, Instant firstParked, Instant lastParked,
                       List<DeadLetter> rows, String rowsHref, String moreHref) {
    }

    /** What a retry or discard did; {@code failure} says why nothing moved. */
    public record Outcome(String action, List<DeadLetterChange.Row> rows, List<UUID> missing, String failure) {
    }

    /**
     * The dead-letter page.
     *
     * @param partial the groups cover only the first rows read (the note says how many)
     */
    public record DeadLetters(List<Group> groups, long total, boolean partial, String note, Outcome outcome, String error) {
    }

    /**
     * Where one event is.
     *
     * @param state {@code parked}, {@code waiting}, {@code published}, {@code applied}, {@code ledger}, {@code not-found};
     *              null before a lookup
     * @param trace     every part found; null before a lookup or after an error
     * @param traceLink the tracing UI's page of its trace; null without a trace id or a configured tracing UI
     */
    public record Event(String query, String state, String headline, String detail, EventTrace trace, String error,
                        Payload payload, String traceLink) {

        public Event(String query, String state, String headline, String detail, EventTrace trace, String error) {
            this(query, state, headline, detail, trace, error, null, null);
        }

        public Event withPayload(Payload payload) {
            return new Event(query, state, headline, detail, trace, error, payload, traceLink);
        }

        public Event withTraceLink(String traceLink) {
            return new Event(query, state, headline, detail, trace, error, payload, traceLink);
        }

        /** The trace id of the span that wrote it, or null. */
        public String traceId() {
            return trace == null ? null : trace.traceId();
        }

        /** The parked row, or null. */
        public DeadLetter deadLetter() {
            return trace == null ? null : trace.deadLetter().orElse(null);
        }

        /** The outbox row, or null. */
        public EventTrace.Pending pending() {
            return trace == null ? null : trace.inOutbox().orElse(null);
        }

        /** The intent ledger's row, or null. */
        public EventTrace.Intent intent() {
            return trace == null ? null : trace.intent().orElse(null);
        }
    }

    /**
     * An event's payload as the page shows it (only with payloads shown).
     *
     * @param text   the payload's head as text (JSON, or a textual content type), or its head in Base64; null: see note
     * @param base64 {@code text} is Base64 of a binary payload's head
     * @param note   what is shown, or why nothing is
     */
    public record Payload(String text, boolean base64, String note) {
    }

    /**
     * An idempotency key lookup.
     *
     * @param looked a lookup ran ({@code state} null then: no such key)
     */
    public record KeyLookup(String scope, String key, boolean looked, IdempotencyKeyState state, String error) {
    }

    /**
     * The Runs page: the last reconciliation run, the last retention round and the latest operator actions, from the
     * operations journal. Each part is null (or empty) when the journal has none; {@code error} says why nothing
     * could be read.
     *
     * @param counts   the last run's number of findings per kind, each with what it means
     * @param findings the last run's first findings
     * @param purged   what the last round purged, per store
     * @param nextDue  when the next retention round is due; null when no schedule ran the last one
     */
    public record Runs(dev.outboxkit.ops.admin.JournalEntry reconcile, List<Count> counts, List<FindingRow> findings,
                       dev.outboxkit.ops.admin.JournalEntry retention, List<Count> purged, Instant nextDue,
                       List<dev.outboxkit.ops.admin.JournalEntry> actions, Instant now, String error) {
    }

    /** A number with its label: findings of one kind, or rows purged from one store. */
    public record Count(String code, String label, long n) {
    }

    /** One finding as the journal keeps it; {@code eventId} null when its subject names no event (an idempotency key). */
    public record FindingRow(String kind, String where, String subject, String eventId, String detail) {
    }

    /** A refusal or error page: what happened and what to do. */
    public record Message(int status, String heading, String what, String todo) {
    }
}
