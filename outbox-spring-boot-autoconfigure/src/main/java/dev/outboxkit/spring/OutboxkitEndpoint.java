package dev.outboxkit.spring;

import dev.outboxkit.ops.admin.DeadLetter;
import dev.outboxkit.ops.admin.DeadLetterChange;
import dev.outboxkit.ops.admin.DeadLetterConflictException;
import dev.outboxkit.ops.admin.DeadLetterFilter;
import dev.outboxkit.ops.admin.DeadLetterPage;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.ops.admin.ReplayResult;
import dev.outboxkit.ops.admin.ReplaySelection;
import dev.outboxkit.ops.admin.Status;
import java.security.Principal;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;

import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The Actuator endpoint {@code outboxkit}, built on outbox-ops' {@link OutboxAdmin} (no SQL of its own):
 * <ul>
 *   <li>{@code GET /actuator/outboxkit}: backlog (total and by topic), oldest unpublished age, dead letters,
 *       leases with holder and fencing token, replication slots;</li>
 *   <li>{@code GET /actuator/outboxkit/dead-letters?limit=100}: the oldest parked rows (never the payload);</li>
 *   <li>{@code POST /actuator/outboxkit/retry} with {@code {"id": "…"}}: moves one dead letter back to the outbox;</li>
 *   <li>{@code POST /actuator/outboxkit/discard} with {@code {"id": "…", "reason": "…"}}: deletes one for good;</li>
 *   <li>{@code POST /actuator/outboxkit/replay} with {@code {"id": "…"}} or {@code {"from": "…", "to": "…"}}
 *       (ISO-8601 instants): publishes kept rows again.</li>
 * </ul>
 * Secured as every Actuator endpoint: expose it ({@code management.endpoints.web.exposure.include=outboxkit}) and
 * protect {@code /actuator/**} with Spring Security. Its default access is read-only, so the write operations exist
 * only after {@code management.endpoint.outboxkit.access=unrestricted}. Each change is an audit line on
 * {@code outboxkit.audit} naming the authenticated principal.
 */
@Endpoint(id = "outboxkit", defaultAccess = Access.READ_ONLY)
public class OutboxkitEndpoint {

    private final OutboxAdmin admin;

    OutboxkitEndpoint(OutboxAdmin admin) {
        this.admin = admin;
    }

    /** The outbox's status. */
    @ReadOperation
    public Map<String, Object> status() throws SQLException {
        Status s = admin.status();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("schema", s.schema());
        out.put("backlog", s.backlog());
        out.put("backlogExact", s.backlogExact());
        out.put("oldestUnpublishedAgeSeconds", seconds(s.oldestUnpublishedAge()));
        List<Map<String, Object>> byTopic = new ArrayList<>();
        for (Status.Backlog b : s.backlogByTopic()) {
            byTopic.add(map("topic", b.topic(), "aggregateType", b.aggregateType(), "events", b.events(),
                    "oldestAgeSeconds", seconds(b.oldestAge())));
        }
        out.put("backlogByTopic", byTopic);
        out.put("deadLetters", s.deadLetters());
        List<Map<String, Object>> leases = new ArrayList<>();
        for (Status.Lease l : s.leases()) {
            leases.add(map("lease", l.key(), "holder", l.holder(), "fence", l.fence(), "valid", l.valid(),
                    "expiresInSeconds", seconds(l.expiresIn())));
        }
        out.put("leases", leases);
        out.put("validLeasesByHolder", s.validLeasesByHolder());
        List<Map<String, Object>> slots = new ArrayList<>();
        for (Status.ReplicationSlot r : s.replicationSlots()) {
            slots.add(map("slot", r.name(), "active", r.active(), "walStatus", r.walStatus(), "lagBytes", r.lagBytes(),
                    "retainedBytes", r.retainedBytes()));
        }
        out.put("replicationSlots", slots);
        return out;
    }

    /** {@code dead-letters}: the oldest parked rows, at most {@code limit} (default 100). */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> section(@Selector String section, @Nullable Integer limit)
            throws SQLException {
        if (!"dead-letters".equals(section)) {
            return error(WebEndpointResponse.STATUS_NOT_FOUND, "no section '" + section + "': try dead-letters");
        }
        int n = limit == null ? 100 : limit;
        if (n < 1 || n > OutboxAdmin.MAX_PAGE_SIZE) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, "limit must be between 1 and " + OutboxAdmin.MAX_PAGE_SIZE);
        }
        DeadLetterPage page = admin.deadLetters(DeadLetterFilter.all(), n, null);
        List<Map<String, Object>> items = new ArrayList<>();
        for (DeadLetter d : page.items()) {
            Map<String, Object> m = map("id", d.id().toString(), "aggregateType", d.aggregateType(), "aggregateId", d.aggregateId(),
                    "eventType", d.eventType(), "seq", d.seq(), "attempts", d.attempts());
            m.putAll(map("createdAt", String.valueOf(d.createdAt()), "parkedAt", String.valueOf(d.parkedAt()),
                    "parkedBy", d.parkedBy(), "errorClass", d.errorClass(), "errorMessage", d.errorMessage(),
                    "payloadBytes", d.payloadBytes()));
            items.add(m);
        }
        return new WebEndpointResponse<>(map("deadLetters", items, "more", page.hasMore()));
    }

    /** {@code retry}, {@code discard} or {@code replay}, of one event (or, for replay, a time range). */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> change(@Selector String action, @Nullable String id,
                                                           @Nullable String reason, @Nullable String from,
                                                           @Nullable String to, SecurityContext security)
            throws SQLException {
        Principal principal = security == null ? null : security.getPrincipal();
        String operator = "actuator:" + (principal == null ? "anonymous" : principal.getName());
        try {
            return switch (action) {
                case "retry" -> changed(admin.retryDeadLetters(DeadLetterFilter.ids(eventId(id)), operator));
                case "discard" -> changed(admin.discardDeadLetters(DeadLetterFilter.ids(eventId(id)), reason, operator));
                case "replay" -> replayed(admin.replay(id != null ? ReplaySelection.ids(List.of(eventId(id)))
                        : ReplaySelection.createdBetween(instant("from", from), to == null ? null : instant("to", to)), false, operator));
                default -> error(WebEndpointResponse.STATUS_NOT_FOUND, "no action '" + action + "': use retry, discard or replay");
            };
        } catch (IllegalArgumentException e) {
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, e.getMessage());
        } catch (DeadLetterConflictException e) {
            return error(409, e.getMessage() + " (" + e.databaseMessage() + ")");
        }
    }

    private static WebEndpointResponse<Map<String, Object>> changed(DeadLetterChange change) {
        List<Map<String, Object>> rows = new ArrayList<>();
        change.rows().forEach(r -> rows.add(map("id", r.id().toString(), "aggregateType", r.aggregateType(),
                "aggregateId", r.aggregateId(), "seq", r.seq())));
        Map<String, Object> body = map("action", change.action().name().toLowerCase(java.util.Locale.ROOT), "rows", rows,
                "missing", change.missing().stream().map(UUID::toString).toList());
        return new WebEndpointResponse<>(body, change.rows().isEmpty() ? WebEndpointResponse.STATUS_NOT_FOUND
                : WebEndpointResponse.STATUS_OK);
    }

    private static WebEndpointResponse<Map<String, Object>> replayed(ReplayResult r) {
        Map<String, String> notReplayed = new LinkedHashMap<>();
        r.notReplayed().forEach((id, why) -> notReplayed.put(id.toString(), why.name()));
        Map<String, Object> body = map("action", "replay",
                "replayed", r.replayed().stream().map(e -> e.id().toString()).toList(), "notReplayed", notReplayed);
        return new WebEndpointResponse<>(body, notReplayed.isEmpty() ? WebEndpointResponse.STATUS_OK
                : WebEndpointResponse.STATUS_NOT_FOUND);
    }

    private static UUID eventId(String id) {
        if (id == null) {
            throw new IllegalArgumentException("id is required: the event id of the dead letter");
        }
        try {
            return UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("id '" + id + "' is not an event id (a UUID)");
        }
    }

    private static Instant instant(String name, String value) {
        if (value == null) {
            throw new IllegalArgumentException(name + " is required: an ISO-8601 instant, e.g. 2026-11-29T08:00:00Z (or give an id)");
        }
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(name + " '" + value + "' is not an ISO-8601 instant, e.g. 2026-11-29T08:00:00Z");
        }
    }

    private static WebEndpointResponse<Map<String, Object>> error(int status, String message) {
        return new WebEndpointResponse<>(map("error", message), status);
    }

    private static Double seconds(Duration d) {
        return d == null ? null : Math.round(d.toNanos() / 1e6) / 1000.0;
    }

    /** A map that keeps order and null values (Map.of refuses both). */
    private static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }
}
