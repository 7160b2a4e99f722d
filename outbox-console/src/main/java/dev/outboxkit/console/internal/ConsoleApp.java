package dev.outboxkit.console.internal;

import dev.outboxkit.console.Console;
import dev.outboxkit.console.ConsoleRequest;
import dev.outboxkit.console.ConsoleResponse;
import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.ops.admin.CdcRelaySlot;
import dev.outboxkit.ops.admin.DeadLetter;
import dev.outboxkit.ops.admin.DeadLetterChange;
import dev.outboxkit.ops.admin.DeadLetterConflictException;
import dev.outboxkit.ops.admin.DeadLetterFilter;
import dev.outboxkit.ops.admin.DeadLetterPage;
import dev.outboxkit.ops.admin.DeadLetterReason;
import dev.outboxkit.ops.admin.EventPayload;
import dev.outboxkit.ops.admin.EventTrace;
import dev.outboxkit.ops.admin.IdempotencyKeyState;
import dev.outboxkit.ops.admin.JournalEntry;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.ops.admin.Overview;
import dev.outboxkit.ops.admin.PartitionBacklog;
import dev.outboxkit.ops.admin.RelayMember;
import dev.outboxkit.ops.admin.RelayReport;
import dev.outboxkit.ops.admin.Status;
import dev.outboxkit.relay.Relay;
import gg.jte.ContentType;
import gg.jte.TemplateEngine;
import gg.jte.output.StringOutput;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Not API: the console's routes, security checks and page assembly behind {@code Console.handle}. */
public final class ConsoleApp implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger("dev.outboxkit.console");
    private static final String COOKIE = "outbox_console";
    private static final String TEMPLATES = "dev.outboxkit.console.internal.templates";
    /** Rows shown per dead-letter group on the page, and per page of one group. */
    static final int ROWS_PER_GROUP = 20;
    /** Reasons listed on the dead-letter page (the largest first). */
    static final int MAX_REASONS = 50;
    /** How much of a payload the event page shows (with payloads shown). */
    static final int PAYLOAD_HEAD_BYTES = 64 * 1024;

    private static final Map<String, String> SECURITY_HEADERS = Map.of(
            "Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
            "X-Content-Type-Options", "nosniff",
            "X-Frame-Options", "DENY",
            "Referrer-Policy", "same-origin");

    private final ConsoleSettings settings;
    private final OutboxAdmin admin;
    private final String base;
    private final TemplateEngine templates;
    private final Assets assets = new Assets();
    private final Sessions sessions;
    private final OverviewSamples samples = new OverviewSamples();
    private final PublishRate publishRate;
    private final ScheduledExecutorService sampler;
    private final Clock clock = Clock.systemUTC();

    public ConsoleApp(ConsoleSettings settings) {
        this.settings = settings;
        this.admin = settings.admin();
        this.base = settings.basePath();
        this.sessions = new Sessions(settings.sessionLifetime(), clock);
        this.publishRate = new PublishRate(settings.relayMeters());
        this.templates = TemplateEngine.createPrecompiled(null, ContentType.Html, ConsoleApp.class.getClassLoader(), TEMPLATES);
        this.sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "outbox-console-sampler");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleWithFixedDelay(this::sample, 0, OverviewSamples.INTERVAL_SECONDS, TimeUnit.SECONDS);
    }

    public String basePath() {
        return base;
    }

    /** One sample for the charts: the backlog, and the publish rate from the relays' reports or this process's relays. */
    private void sample() {
        Instant now = clock.instant();
        Long backlog = null;
        List<RelayReport> reports = null;
        try {
            Overview read = admin.overview();
            backlog = read.status().backlog();
            reports = read.reportsKept() ? read.reports() : null;
        } catch (Exception e) {
            log.debug("console sample failed: {}", e.toString());
        }
        samples.add(now, backlog, publishRate.next(now, reports));
    }

    public ConsoleResponse handle(ConsoleRequest request) {
        try {
            return route(request);
        } catch (RuntimeException e) {
            log.warn("console: {} {} failed", request.method(), request.path(), e);
            return message(request, new Views.Message(500, "The console failed",
                    "It could not answer " + request.method() + " " + request.path() + " (" + e.getClass().getSimpleName() + ").",
                    "The stack trace is in the application's log (logger dev.outboxkit.console). Reload to try again."));
        }
    }

    private ConsoleResponse route(ConsoleRequest r) {
        String path = r.path();
        if (path.equals(base)) {
            return redirect(base + "/");
        }
        if (!path.startsWith(base + "/")) {
            return notFound(r);
        }
        String rest = path.substring(base.length());
        boolean get = r.method().equals("GET") || r.method().equals("HEAD");
        boolean post = r.method().equals("POST");
        if (rest.startsWith("/assets/") && get) {
            return asset(rest.substring("/assets/".length()));
        }
        switch (rest) {
            case "/":
                return get ? overviewPage(r) : notAllowed(r, "GET");
            case "/fragments/overview":
                return get ? page("overviewFragment", Map.of("overview", overview(), "page", pageFor(r, "Overview", "overview")))
                        : notAllowed(r, "GET");
            case "/fragments/reason-rows":
                return get ? reasonRows(r) : notAllowed(r, "GET");
            case "/samples.json":
                return get ? response(200, "application/json", samples.json(), true) : notAllowed(r, "GET");
            case "/dead-letters":
                return get ? deadLettersPage(r, null) : notAllowed(r, "GET");
            case "/dead-letters/retry":
            case "/dead-letters/discard":
                return post ? deadLetterAction(r, rest.endsWith("retry")) : notAllowed(r, "POST");
            case "/events":
                return get ? eventPage(r) : notAllowed(r, "GET");
            case "/idempotency":
                return get ? idempotencyPage(r) : notAllowed(r, "GET");
            case "/runs":
                return get ? runsPage(r) : notAllowed(r, "GET");
            case "/login":
                return get ? loginPage(r, 200, null) : post ? login(r) : notAllowed(r, "GET, POST");
            case "/logout":
                return post ? logout(r) : notAllowed(r, "POST");
            default:
                return notFound(r);
        }
    }

    // ---------------------------------------------------------------- overview

    private ConsoleResponse overviewPage(ConsoleRequest r) {
        return page("overview", Map.of("page", pageFor(r, "Overview", "overview"), "overview", overview()));
    }

    private Views.Overview overview() {
        Overview read = null;
        String error = null;
        long started = System.nanoTime();
        try {
            read = admin.overview();
        } catch (Exception e) {
            error = describe("read the status", e);
        }
        java.time.Duration took = java.time.Duration.ofNanos(System.nanoTime() - started);
        Status status = read == null ? null : read.status();
        List<Views.Instance> instances = read == null ? List.of() : instances(status, read.members(), read.reports());
        Map<String, PartitionBacklog> byPartition = new LinkedHashMap<>();
        if (read != null) {
            read.backlogByPartition().forEach(b -> byPartition.put(b.leaseKey(), b));
        }
        List<CdcRelaySlot> cdc = List.of();
        String cdcError = null;
        try {
            cdc = admin.cdcRelaySlots();
        } catch (Exception e) {
            cdcError = describe("read the CDC relay slots", e);
        }
        Relay.Health health = null;
        if (settings.relayHealth() != null) {
            try {
                health = settings.relayHealth().get();
            } catch (RuntimeException e) {
                health = new Relay.Health(false, false, "the health check failed: " + e.getClass().getSimpleName());
            }
        }
        return new Views.Overview(status, error, took, instances, byPartition, read == null || read.reportsKept(), cdc, cdcError, health,
                read != null && read.reportsKept() ? Views.RateSource.FLEET : settings.relayMeters() != null ? Views.RateSource.PROCESS : null,
                publishRate.lastPublished(), clock.instant());
    }

    /**
     * Every instance the lease, member or report table names, leases by holder: one with a valid lease holds, one alive
     * (a live member or a live report) without one stands by, the rest are gone (their leases expired). Holders first,
     * then standbys, then gone.
     */
    static List<Views.Instance> instances(Status status, List<RelayMember> members, List<RelayReport> reports) {
        Map<String, List<Status.Lease>> byHolder = new LinkedHashMap<>();
        for (Status.Lease l : status.leases()) {
            byHolder.computeIfAbsent(l.holder() == null ? "(none)" : l.holder(), k -> new ArrayList<>()).add(l);
        }
        Map<String, RelayMember> byId = new LinkedHashMap<>();
        members.forEach(m -> byId.put(m.id(), m));
        Map<String, RelayReport> reportById = new LinkedHashMap<>();
        reports.forEach(r -> reportById.put(r.instanceId(), r));
        byId.keySet().forEach(id -> byHolder.computeIfAbsent(id, k -> new ArrayList<>()));
        reportById.keySet().forEach(id -> byHolder.computeIfAbsent(id, k -> new ArrayList<>()));
        List<Views.Instance> out = new ArrayList<>();
        byHolder.forEach((name, leases) -> {
            long valid = leases.stream().filter(Status.Lease::valid).count();
            RelayMember member = byId.get(name);
            RelayReport report = reportById.get(name);
            boolean alive = member != null && member.alive() || report != null && report.alive();
            String role = valid > 0 ? "holder" : alive ? "standby" : "gone";
            out.add(new Views.Instance(name, role, valid, List.copyOf(leases), member, report));
        });
        out.sort(Comparator.comparingInt(i -> List.of("holder", "standby", "gone").indexOf(i.role())));
        return out;
    }

    // ---------------------------------------------------------------- dead letters

    private ConsoleResponse deadLettersPage(ConsoleRequest r, Views.Outcome outcome) {
        Views.Page page = pageFor(r, "Dead letters", "dead-letters");
        String errorClass = r.queryParameter("errorClass");
        String message = r.queryParameter("message");
        Views.DeadLetters view;
        try {
            if (errorClass != null) {
                view = oneGroup(errorClass, message == null ? "" : message, cursor(r.queryParameter("after")), outcome);
            } else {
                view = groups(outcome);
            }
        } catch (IllegalArgumentException e) {
            return message(r, new Views.Message(400, "Bad request", e.getMessage(), "Go back to the dead letters and follow a link from there."));
        } catch (Exception e) {
            view = new Views.DeadLetters(List.of(), 0, false, null, outcome, describe("read the dead letters", e));
        }
        return page("deadLetters", Map.of("page", page, "view", view));
    }

    /**
     * The reasons, largest first (grouped in the database). Their rows cost a query each, so the page names where to
     * load them from ({@code /fragments/reason-rows}) and the browser fetches them after the page is shown.
     */
    private Views.DeadLetters groups(Views.Outcome outcome) throws SQLException {
        List<DeadLetterReason> reasons = admin.deadLetterReasons(MAX_REASONS + 1);
        List<Views.Group> groups = new ArrayList<>();
        long total = 0;
        for (int i = 0; i < Math.min(MAX_REASONS, reasons.size()); i++) {
            DeadLetterReason reason = reasons.get(i);
            total += reason.count();
            String query = reasonQuery(reason.errorClass(), reason.messagePattern(), null);
            groups.add(new Views.Group(reason.errorClass(), reason.messagePattern(), reason.count(), reason.firstParked(),
                    reason.lastParked(), List.of(), base + "/fragments/reason-rows?" + query, base + "/dead-letters?" + query));
        }
        String note = (reasons.size() > MAX_REASONS ? "The " + MAX_REASONS + " largest reasons are shown; there are more. " : "")
                + "Counts cover the " + String.format("%,d", OutboxAdmin.REASONS_WINDOW)
                + " most recently parked dead letters; a retry or discard of a reason acts on all of its rows.";
        return new Views.DeadLetters(groups, total, reasons.size() > MAX_REASONS, note, outcome, null);
    }

    /** The first rows of one reason, for the dead-letter page to show under it. */
    private ConsoleResponse reasonRows(ConsoleRequest r) {
        String errorClass = r.queryParameter("errorClass");
        if (errorClass == null) {
            return message(r, new Views.Message(400, "No reason named", "The request named no error class.",
                    "Open the dead-letter page and follow a reason's link."));
        }
        String pattern = nz(r.queryParameter("message"));
        try {
            DeadLetterPage page = admin.deadLetters(reasonFilter(errorClass, pattern), ROWS_PER_GROUP, null);
            String more = page.hasMore() ? base + "/dead-letters?" + reasonQuery(errorClass, pattern, page.next()) : null;
            return page("reasonRows", Map.of("page", pageFor(r, "Dead letters", "dead-letters"), "rows", page.items(),
                    "moreHref", more == null ? "" : more));
        } catch (Exception e) {
            return response(200, "text/html; charset=utf-8", "<p class=\"error\">" + escape(describe("read the rows", e)) + "</p>", true);
        }
    }

    /** One reason's rows, a page at a time. */
    private Views.DeadLetters oneGroup(String errorClass, String pattern, DeadLetterPage.Cursor after, Views.Outcome outcome)
            throws SQLException {
        DeadLetterPage page = admin.deadLetters(reasonFilter(errorClass, pattern), ROWS_PER_GROUP, after);
        List<DeadLetter> rows = page.items();
        String more = page.hasMore() ? groupHref(errorClass, pattern, page.next()) : null;
        Instant firstParked = rows.isEmpty() ? null : rows.get(0).parkedAt();
        Instant lastParked = rows.isEmpty() ? null : rows.get(rows.size() - 1).parkedAt();
        Views.Group g = new Views.Group(errorClass, pattern, rows.size(), firstParked, lastParked, rows, null, more);
        return new Views.DeadLetters(rows.isEmpty() ? List.of() : List.of(g), rows.size(), page.hasMore(),
                "The rows of one reason" + (after == null ? "" : " (a later page)") + "; the count is this page's.", outcome, null);
    }

    private static DeadLetterFilter reasonFilter(String errorClass, String pattern) {
        return DeadLetterFilter.all().withReason(errorClass, pattern);
    }

    private String groupHref(String errorClass, String message, DeadLetterPage.Cursor after) {
        return base + "/dead-letters?" + reasonQuery(errorClass, message, after);
    }

    private static String reasonQuery(String errorClass, String message, DeadLetterPage.Cursor after) {
        return "errorClass=" + enc(errorClass) + "&message=" + enc(message)
                + (after == null ? "" : "&after=" + enc(after.parkedAt().getEpochSecond() + ":" + after.parkedAt().getNano()
                        + ":" + after.seq() + ":" + after.id()));
    }

    /** HTML escaping for the one message written outside a template. */
    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static DeadLetterPage.Cursor cursor(String token) {
        if (token == null || token.isEmpty()) {
            return null;
        }
        String[] p = token.split(":");
        try {
            if (p.length != 4) {
                throw new IllegalArgumentException();
            }
            return new DeadLetterPage.Cursor(Instant.ofEpochSecond(Long.parseLong(p[0]), Long.parseLong(p[1])),
                    Long.parseLong(p[2]), UUID.fromString(p[3]));
        } catch (IllegalArgumentException | java.time.DateTimeException e) {
            throw new IllegalArgumentException("'after' is not a page cursor of this console: " + abbreviate(token));
        }
    }

    private ConsoleResponse deadLetterAction(ConsoleRequest r, boolean retry) {
        String operator = requireWriter(r);
        if (operator.startsWith("!")) {
            return refusal(operator, r);
        }
        DeadLetterFilter filter;
        String idParam = r.formParameter("id");
        String errorClass = r.formParameter("errorClass");
        try {
            if (idParam != null) {
                filter = DeadLetterFilter.ids(UUID.fromString(idParam.strip()));
            } else if (errorClass != null) {
                filter = reasonFilter(errorClass, nz(r.formParameter("message")));
            } else {
                return message(r, new Views.Message(400, "Nothing selected",
                        "The form named neither a dead letter (id) nor a reason (errorClass and message).",
                        "Use the Retry and Discard buttons of the dead-letter page."));
            }
        } catch (IllegalArgumentException e) {
            return message(r, new Views.Message(400, "Not an event id", "'" + abbreviate(idParam) + "' is not a UUID.",
                    "Use the Retry and Discard buttons of the dead-letter page."));
        } catch (Exception e) {
            return deadLettersPage(r, new Views.Outcome(retry ? "retry" : "discard", List.of(), List.of(),
                    describe("find the dead letters of this reason", e)));
        }
        Views.Outcome outcome;
        try {
            DeadLetterChange change = retry ? admin.retryDeadLetters(filter, operator)
                    : admin.discardDeadLetters(filter, blankToNull(r.formParameter("reason")), operator);
            outcome = new Views.Outcome(retry ? "retry" : "discard", change.rows(), change.missing(), null);
        } catch (DeadLetterConflictException e) {
            outcome = new Views.Outcome("retry", List.of(), List.of(), e.getMessage());
        } catch (Exception e) {
            outcome = new Views.Outcome(retry ? "retry" : "discard", List.of(), List.of(), describe(retry ? "retry" : "discard", e));
        }
        return deadLettersPage(r, outcome);
    }

    // ---------------------------------------------------------------- where is my event

    private ConsoleResponse eventPage(ConsoleRequest r) {
        Views.Page page = pageFor(r, "Where is my event?", "events");
        String q = r.queryParameter("id");
        if (q == null || q.isBlank()) {
            return page("event", Map.of("page", page, "event", new Views.Event("", null, null, null, null, null)));
        }
        UUID id;
        try {
            id = UUID.fromString(q.strip());
        } catch (IllegalArgumentException e) {
            Views.Event bad = new Views.Event(abbreviate(q), null, null, null, null,
                    "'" + abbreviate(q) + "' is not an event id: give the UUID the writer returned (8-4-4-4-12 hex digits).");
            return page("event", 400, Map.of("page", page, "event", bad));
        }
        Views.Event found = lookup(id);
        if (settings.showPayloads() && (found.pending() != null || found.deadLetter() != null)) {
            found = found.withPayload(payload(id, page.operator()));
        }
        if (settings.traceUrl() != null && found.traceId() != null) {
            // the trace id is 32 hex digits (OutboxAdmin parses it strictly): nothing to escape in the URL
            found = found.withTraceLink(settings.traceUrl().replace(Console.Builder.TRACE_ID, found.traceId()));
        }
        return page("event", Map.of("page", page, "event", found));
    }

    /** The head of the payload (64 KiB) as text, or in Base64 when it is binary and not textual. */
    private Views.Payload payload(UUID id, String operator) {
        try {
            Optional<EventPayload> read = admin.eventPayload(id, PAYLOAD_HEAD_BYTES,
                    operator != null ? "console operator " + operator : "a console reader without a login");
            if (read.isEmpty()) {
                return new Views.Payload(null, false, "Its row is gone since the lookup above.");
            }
            EventPayload p = read.get();
            String what = (p.json() ? "JSON" : p.contentType()) + ", " + Fmt.bytes(p.size())
                    + (p.truncated() ? "; the first " + Fmt.bytes(p.head().length) + " are shown" : "");
            boolean textual = p.json() || p.contentType().startsWith("text/") || p.contentType().contains("json")
                    || p.contentType().contains("xml");
            return textual ? new Views.Payload(p.text(), false, what)
                    : new Views.Payload(Base64.getEncoder().encodeToString(p.head()), true, what + ", in Base64");
        } catch (Exception e) {
            return new Views.Payload(null, false, describe("read the payload", e));
        }
    }

    /** Where {@code id} is, from {@code OutboxAdmin.traceEvent}; the state is the most telling part found. */
    private Views.Event lookup(UUID id) {
        String q = id.toString();
        try {
            EventTrace t = admin.traceEvent(id);
            if (t.deadLetter().isPresent()) {
                DeadLetter d = t.deadLetter().get();
                return new Views.Event(q, "parked", "Dead-lettered: Kafka refused it and the relay parked it.",
                        "Parked " + Fmt.time(d.parkedAt()) + " by " + d.parkedBy() + " after " + d.attempts() + " attempt(s).", t, null);
            }
            if (t.inOutbox().isPresent()) {
                EventTrace.Pending p = t.inOutbox().get();
                if (p.published()) {
                    return new Views.Event(q, "published", "Published: a relay sent it and kept its row (MARK mode).",
                            "Marked published " + Fmt.time(p.publishedAt()) + ".", t, null);
                }
                String lease = p.leaseKey() == null ? "No polling relay instance is alive to take it (or the CDC relay publishes this outbox)."
                        : p.leaseHolder() == null ? "Its lease " + p.leaseKey() + " is held by nobody: no relay works on it now."
                        : "Its lease " + p.leaseKey() + " is held by " + p.leaseHolder() + ".";
                return new Views.Event(q, "waiting", "Waiting in the outbox table since " + Fmt.time(p.createdAt()) + " ("
                        + Fmt.age(p.age()) + "), " + p.attempts() + " failed attempt(s).", lease, t, null);
            }
            if (!t.applications().isEmpty()) {
                return new Views.Event(q, "applied", "Published and applied by " + t.applications().size() + " consumer group(s).",
                        null, t, null);
            }
            if (t.intent().isPresent()) {
                EventTrace.Intent in = t.intent().get();
                return in.publishedAt() != null
                        ? new Views.Event(q, "published", "Published " + Fmt.time(in.publishedAt())
                                + "; its outbox row is gone, the intent ledger remembers it.", null, t, null)
                        : new Views.Event(q, "ledger", "Written " + Fmt.time(in.createdAt()) + " but never published: "
                                + "the intent ledger has it, the outbox has not.", "It was parked and discarded, written and "
                                + "deleted in one transaction, or the ledger's triggers were off when it was published.", t, null);
            }
            return new Views.Event(q, "not-found", "Not found: not in the outbox table, not dead-lettered, applied by no "
                    + "consumer group here, not in the intent ledger.", "Either a relay published it and deleted its row (the "
                    + "default) and nothing here remembers it, or it was never committed.", t, null);
        } catch (Exception e) {
            return new Views.Event(q, null, null, null, null, describe("look the event up", e));
        }
    }

    // ---------------------------------------------------------------- idempotency keys

    private ConsoleResponse idempotencyPage(ConsoleRequest r) {
        Views.Page page = pageFor(r, "What happened to a request?", "idempotency");
        String scope = nz(r.queryParameter("scope")).strip();
        String key = nz(r.queryParameter("key")).strip();
        if (scope.isEmpty() && key.isEmpty()) {
            return page("idempotency", Map.of("page", page, "lookup", new Views.KeyLookup("", "", false, null, null)));
        }
        if (scope.isEmpty() || key.isEmpty() || scope.length() > 200 || key.length() > 500) {
            return page("idempotency", 400, Map.of("page", page, "lookup", new Views.KeyLookup(abbreviate(scope), abbreviate(key),
                    false, null, "Give both the scope and the key the request was made with (each a few hundred characters at most).")));
        }
        try {
            Optional<IdempotencyKeyState> state = admin.idempotencyKey(scope, key);
            return page("idempotency", Map.of("page", page, "lookup", new Views.KeyLookup(scope, key, true, state.orElse(null), null)));
        } catch (Exception e) {
            return page("idempotency", Map.of("page", page, "lookup", new Views.KeyLookup(scope, key, false, null,
                    describe("look the key up", e))));
        }
    }

    // ---------------------------------------------------------------- runs (the operations journal)

    /** Operator actions listed on the Runs page. */
    static final int ACTIONS_SHOWN = 20;

    /** What each kind of finding means, in the order the page lists them. */
    private static final Map<String, String> FINDING_KINDS = linked(
            "lost", "Intents without an effect (lost, or stuck unpublished)",
            "phantom", "Effects without an intent (phantom)",
            "duplicate_effect", "Intents with two effects (an external effect performed twice)",
            "late_arrival", "Effects later than the dedupe window (late arrival)",
            "unknown_outcome", "Unknown outcomes (idempotency keys or external effects past their lease)");

    private static Map<String, String> linked(String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return m;
    }

    private ConsoleResponse runsPage(ConsoleRequest r) {
        Views.Page page = pageFor(r, "Runs", "runs");
        Instant now = clock.instant();
        Views.Runs runs;
        try {
            List<JournalEntry> reconcile = admin.journal(1, JournalEntry.Kind.RECONCILE);
            List<JournalEntry> retention = admin.journal(1, JournalEntry.Kind.RETENTION);
            List<JournalEntry> actions = admin.journal(ACTIONS_SHOWN, JournalEntry.Kind.DEAD_LETTER_RETRY,
                    JournalEntry.Kind.DEAD_LETTER_DISCARD);
            JournalEntry lastRun = reconcile.isEmpty() ? null : reconcile.get(0);
            JournalEntry lastRound = retention.isEmpty() ? null : retention.get(0);
            runs = new Views.Runs(lastRun, counts(lastRun), findings(lastRun), lastRound, purged(lastRound),
                    lastRound == null ? null : lastRound.nextRoundDue().orElse(null), actions, now, null);
        } catch (Exception e) {
            runs = new Views.Runs(null, List.of(), List.of(), null, List.of(), null, List.of(), now,
                    describe("read the operations journal", e));
        }
        return page("runs", Map.of("page", page, "runs", runs));
    }

    static List<Views.Count> counts(JournalEntry run) {
        if (run == null || !(run.detail().get("counts") instanceof Map<?, ?> counts)) {
            return List.of();
        }
        List<Views.Count> out = new ArrayList<>();
        FINDING_KINDS.forEach((code, label) -> out.add(new Views.Count(code, label, number(counts.get(code)))));
        return out;
    }

    static List<Views.FindingRow> findings(JournalEntry run) {
        if (run == null || !(run.detail().get("findings") instanceof List<?> findings)) {
            return List.of();
        }
        List<Views.FindingRow> out = new ArrayList<>();
        for (Object o : findings) {
            if (o instanceof Map<?, ?> f) {
                String kind = text(f.get("kind"));
                out.add(new Views.FindingRow(FINDING_KINDS.getOrDefault(kind, kind), text(f.get("where")), text(f.get("subject")),
                        f.get("eventId") == null ? null : text(f.get("eventId")), text(f.get("detail"))));
            }
        }
        return out;
    }

    static List<Views.Count> purged(JournalEntry round) {
        if (round == null || !(round.detail().get("purged") instanceof Map<?, ?> purged)) {
            return List.of();
        }
        List<Views.Count> out = new ArrayList<>();
        purged.forEach((store, n) -> out.add(new Views.Count(text(store), storeLabel(text(store)), number(n))));
        return out;
    }

    private static String storeLabel(String store) {
        return switch (store) {
            case "intent_partitions" -> "Intent ledger: day partitions dropped";
            case "intent_rows" -> "Intent ledger: rows deleted outside partitions";
            case "idempotency_keys" -> "Idempotency keys";
            case "dead_letters" -> "Dead letters";
            case "archived_events" -> "Published rows kept by a MARK-mode relay";
            case "journal_entries" -> "Operations journal entries";
            default -> store.startsWith("processed_events/")
                    ? "processed_event of group " + store.substring("processed_events/".length()) : store;
        };
    }

    private static long number(Object o) {
        return o instanceof Number n ? n.longValue() : 0;
    }

    private static String text(Object o) {
        return o == null ? "" : o.toString();
    }

    // ---------------------------------------------------------------- login

    private ConsoleResponse loginPage(ConsoleRequest r, int status, String problem) {
        return page("login", status, Map.of("page", pageFor(r, "Log in", "login"), "problem", problem == null ? "" : problem));
    }

    private ConsoleResponse login(ConsoleRequest r) {
        if (settings.operatorToken() == null) {
            return message(r, new Views.Message(403, "The built-in login is off",
                    "This console has no operator token configured.",
                    "Start it with an operator token (the sidecar's --console-token-file or --console-token-env) to log in."));
        }
        if (!sameOrigin(r)) {
            return crossOrigin(r);
        }
        if (!sessions.loginAllowed()) {
            return loginPage(r, 429, "Too many wrong tokens in the last minute: wait a minute, then log in again.");
        }
        if (!Sessions.constantTimeEquals(settings.operatorToken().reveal(), nz(r.formParameter("token")))) {
            sessions.loginFailed();
            log.warn("console: a login with a wrong operator token was refused");
            return loginPage(r, 401, "That is not the operator token. Give the token from the console's token file or variable.");
        }
        Sessions.Session s = sessions.create(settings.operatorName());
        log.info("console: operator {} logged in", s.operator());
        Map<String, String> headers = new LinkedHashMap<>(SECURITY_HEADERS);
        headers.put("Location", base + "/dead-letters");
        headers.put("Cache-Control", "no-store");
        headers.put("Set-Cookie", COOKIE + "=" + s.id() + "; Path=" + base + "; HttpOnly; SameSite=Strict; Max-Age="
                + sessions.lifetime().toSeconds() + (r.secure() ? "; Secure" : ""));
        return new ConsoleResponse(303, headers, new byte[0]);
    }

    private ConsoleResponse logout(ConsoleRequest r) {
        Sessions.Session s = sessions.find(cookie(r));
        if (s != null && sameOrigin(r) && Sessions.constantTimeEquals(s.csrf(), nz(r.formParameter("csrf")))) {
            sessions.end(s.id());
        }
        Map<String, String> headers = new LinkedHashMap<>(SECURITY_HEADERS);
        headers.put("Location", base + "/");
        headers.put("Cache-Control", "no-store");
        headers.put("Set-Cookie", COOKIE + "=; Path=" + base + "; HttpOnly; SameSite=Strict; Max-Age=0" + (r.secure() ? "; Secure" : ""));
        return new ConsoleResponse(303, headers, new byte[0]);
    }

    // ---------------------------------------------------------------- security

    private ConsoleResponse refusal(String key, ConsoleRequest r) {
        switch (key) {
            case "!off":
                return message(r, new Views.Message(403, "Write actions are off",
                        "This console is read-only: retry and discard are not enabled.",
                        "Use the CLI (outbox dead-letters retry|discard), or restart the console with write actions on "
                                + "(the sidecar's --console-write-actions; outboxkit.console.write-actions=true in Spring Boot)."));
            case "!origin":
                return crossOrigin(r);
            case "!login":
                return message(r, new Views.Message(401, "Log in first",
                        "Retry and discard need a logged-in operator; this request has no valid session (none, or it expired).",
                        settings.operatorToken() == null ? "Authenticate through the application that hosts the console."
                                : "Log in at " + base + "/login with the operator token, then use the buttons again."));
            default:
                return message(r, new Views.Message(403, "The form is stale",
                        "The request did not carry this session's form token, so it may not come from a console page.",
                        "Reload the dead-letter page and use its buttons again."));
        }
    }

    /** The operator allowed to write, or a refusal key ({@code !off}, {@code !origin}, {@code !login}, {@code !csrf}). */
    private String requireWriter(ConsoleRequest r) {
        if (!settings.writeActions()) {
            return "!off";
        }
        if (!sameOrigin(r)) {
            return "!origin";
        }
        String operator;
        String csrf;
        if (r.operator() != null) {
            operator = r.operator();
            csrf = sessions.hostCsrf(operator);
        } else {
            Sessions.Session s = sessions.find(cookie(r));
            if (s == null) {
                return "!login";
            }
            operator = s.operator();
            csrf = s.csrf();
        }
        if (!Sessions.constantTimeEquals(csrf, r.formParameter("csrf"))) {
            log.warn("console: a {} by {} without this session's CSRF token was refused", r.path(), operator);
            return "!csrf";
        }
        return operator;
    }

    private ConsoleResponse crossOrigin(ConsoleRequest r) {
        return message(r, new Views.Message(403, "Refused: another site sent this form",
                "The browser said the form came from " + abbreviate(r.header("Origin")) + ", not from this console's host.",
                "Open the console directly (not through another site or a proxy that rewrites Host) and try again."));
    }

    /** No Origin header (older browsers, curl) passes; one that is present must name the Host the request went to. */
    private static boolean sameOrigin(ConsoleRequest r) {
        String origin = r.header("Origin");
        if (origin == null) {
            return true;
        }
        String host = r.header("Host");
        try {
            URI u = URI.create(origin);
            if (u.getHost() == null || host == null) {
                return false;
            }
            String authority = u.getPort() < 0 ? u.getHost() : u.getHost() + ":" + u.getPort();
            return authority.equalsIgnoreCase(host);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static String cookie(ConsoleRequest r) {
        String header = r.header("Cookie");
        if (header == null) {
            return null;
        }
        for (String part : header.split(";")) {
            String p = part.strip();
            if (p.startsWith(COOKIE + "=")) {
                return p.substring(COOKIE.length() + 1);
            }
        }
        return null;
    }

    private Views.Page pageFor(ConsoleRequest r, String title, String nav) {
        String operator = null;
        String csrf = null;
        if (r.operator() != null) {
            operator = r.operator();
            csrf = sessions.hostCsrf(operator);
        } else {
            Sessions.Session s = sessions.find(cookie(r));
            if (s != null) {
                operator = s.operator();
                csrf = s.csrf();
            }
        }
        return new Views.Page(title, base, nav, operator, csrf, settings.writeActions(), settings.operatorToken() != null,
                settings.writeActions() && operator != null, r.hostCsrf());
    }

    // ---------------------------------------------------------------- responses

    private ConsoleResponse page(String template, Map<String, Object> params) {
        return page(template, 200, params);
    }

    private ConsoleResponse page(String template, int status, Map<String, Object> params) {
        StringOutput out = new StringOutput();
        templates.render(template + ".jte", params, out);
        return response(status, "text/html; charset=utf-8", out.toString(), true);
    }

    private ConsoleResponse message(ConsoleRequest r, Views.Message m) {
        return page("message", m.status(), Map.of("page", pageFor(r, m.heading(), ""), "message", m));
    }

    private ConsoleResponse notFound(ConsoleRequest r) {
        return message(r, new Views.Message(404, "Not found", "The console has no page at " + abbreviate(r.path()) + ".",
                "Start from the overview at " + base + "/."));
    }

    private ConsoleResponse notAllowed(ConsoleRequest r, String allowed) {
        return message(r, new Views.Message(405, "Method not allowed", r.method() + " is not accepted at " + abbreviate(r.path()) + ".",
                "Use " + allowed + "."));
    }

    private ConsoleResponse redirect(String location) {
        Map<String, String> headers = new LinkedHashMap<>(SECURITY_HEADERS);
        headers.put("Location", location);
        return new ConsoleResponse(302, headers, new byte[0]);
    }

    private ConsoleResponse asset(String name) {
        Assets.Asset a = assets.get(name);
        if (a == null) {
            return response(404, "text/plain; charset=utf-8", "no such asset\n", true);
        }
        Map<String, String> headers = new LinkedHashMap<>(SECURITY_HEADERS);
        headers.put("Content-Type", a.contentType());
        headers.put("Cache-Control", "public, max-age=3600");
        return new ConsoleResponse(200, headers, a.bytes());
    }

    private static ConsoleResponse response(int status, String type, String body, boolean noStore) {
        Map<String, String> headers = new LinkedHashMap<>(SECURITY_HEADERS);
        headers.put("Content-Type", type);
        if (noStore) {
            headers.put("Cache-Control", "no-store");
        }
        return new ConsoleResponse(status, headers, body.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A failure as the page says it: the library's own messages (missing grants, missing tables) as they are; a
     * database error by its SQLState only, since driver messages can name hosts. The whole error goes to the log.
     */
    private static String describe(String what, Exception e) {
        log.warn("console: could not {}", what, e);
        if (e instanceof MissingGrantsException || e instanceof IllegalStateException || e instanceof IllegalArgumentException) {
            return "Could not " + what + ": " + e.getMessage();
        }
        if (e instanceof SQLException sql) {
            return "Could not " + what + ": the database answered with an error (SQLState " + sql.getSQLState()
                    + "). The full error is in the application's log (logger dev.outboxkit.console).";
        }
        return "Could not " + what + " (" + e.getClass().getSimpleName() + "). The full error is in the application's log "
                + "(logger dev.outboxkit.console).";
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    private static String abbreviate(String s) {
        if (s == null) {
            return "(none)";
        }
        return s.length() <= 80 ? s : s.substring(0, 80) + "…";
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
