package dev.outboxkit.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.Secret;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The console's refusals and headers over real HTTP (the JDK server the sidecar uses) on a real database: writes need
 * write actions, a session, its CSRF token and a matching Origin; the token never appears in a page.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ConsoleSecurityTest {

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void pagesCarryTheSecurityHeadersAndAreNeverCached(TestDatabase db) throws Exception {
        try (ConsoleServer s = new ConsoleServer(db, b -> b)) {
            for (String path : new String[] {"/", "/dead-letters", "/events?id=" + UUID.randomUUID(), "/fragments/overview", "/login", "/fragments/reason-rows?errorClass=E&message=m",
                    "/idempotency?scope=checkout&key=k-1", "/runs"}) {
                HttpResponse<String> r = get(s.url() + path, null);
                assertThat(r.statusCode()).as(path).isEqualTo(200);
                assertThat(r.headers().firstValue("Content-Security-Policy")).as(path).hasValueSatisfying(csp ->
                        assertThat(csp).contains("default-src 'self'").contains("frame-ancestors 'none'"));
                assertThat(r.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
                assertThat(r.headers().firstValue("X-Frame-Options")).hasValue("DENY");
                assertThat(r.headers().firstValue("Referrer-Policy")).hasValue("same-origin");
                assertThat(r.headers().firstValue("Cache-Control")).as(path).hasValue("no-store");
                assertThat(r.body()).doesNotContain("<script>").doesNotContain(" onclick=").doesNotContain(db.jdbcUrl());
            }
            assertThat(get(s.url() + "/assets/htmx.min.js", null).statusCode()).isEqualTo(200);
            assertThat(get(s.url() + "/assets/uPlot.iife.min.js", null).statusCode()).isEqualTo(200);
            assertThat(get(s.url() + "/nowhere", null).statusCode()).isEqualTo(404);
        }
    }

    @Test
    void payloadsAreShownOnlyWhenTurnedOnAndEveryReadIsAudited(TestDatabase db) throws Exception {
        UUID json;
        try (java.sql.Connection c = db.connect()) {
            json = dev.outboxkit.testkit.OutboxRows.insert(c, "customer", "c-1", "{\"email\": \"ada@example.org\"}");
        }
        UUID binary = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000301");
        db.exec("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload_bytes, content_type,"
                + " headers, created_at, error_class, error_message, attempts, parked_by) VALUES ('" + binary + "', 0, 'doc', 'd',"
                + " 'Scanned', '\\x00ff10', 'application/octet-stream', '{}', now(), 'E', 'm', 1, 'relay-1')");
        try (ConsoleServer s = new ConsoleServer(db, b -> b)) {
            String page = get(s.url() + "/events?id=" + json, null).body();
            assertThat(page).contains("data-state=\"waiting\"").doesNotContain("ada@example.org").doesNotContain("event-payload");
        }
        ch.qos.logback.classic.Logger audit = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                dev.outboxkit.ops.admin.OutboxAdmin.AUDIT_LOGGER);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines = new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        audit.addAppender(lines);
        try (ConsoleServer s = new ConsoleServer(db, b -> b.showPayloads(true))) {
            String page = get(s.url() + "/events?id=" + json, null).body();
            assertThat(page).contains("id=\"event-payload\"").contains("ada@example.org").contains("JSON, ");
            String parked = get(s.url() + "/events?id=" + binary, null).body();
            assertThat(parked).contains("application/octet-stream, 3 B, in Base64").contains("AP8Q");
        } finally {
            audit.detachAppender(lines);
        }
        assertThat(lines.list).extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .as("one audit line a read, naming the event and the reader, never the payload")
                .anySatisfy(l -> assertThat(l).contains(json.toString()).contains("a console reader without a login"))
                .anySatisfy(l -> assertThat(l).contains(binary.toString()).contains("outbox_dead_letter"))
                .noneSatisfy(l -> assertThat(l).contains("ada@example.org"));
    }

    @Test
    void theTraceIdIsShownAndLinkedToTheTracingUiOnlyWithItsUrl(TestDatabase db) throws Exception {
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        UUID traced = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000401");
        UUID malformed = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000402");
        db.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, headers) VALUES"
                + " (?, 'order', 'o-1', 'Placed', '{}', jsonb_build_object('traceparent', ?::text)),"
                + " (?, 'order', 'o-2', 'Placed', '{}', '{\"traceparent\": \"00-<b>x</b>-00f067aa0ba902b7-01\"}')",
                traced, "00-" + traceId + "-00f067aa0ba902b7-01", malformed);
        try (ConsoleServer s = new ConsoleServer(db, b -> b)) {
            String page = get(s.url() + "/events?id=" + traced, null).body();
            assertThat(page).contains("id=\"event-trace\"").contains("<code>" + traceId + "</code>")
                    .doesNotContain("Open in the tracing UI");
            assertThat(get(s.url() + "/events?id=" + malformed, null).body()).contains("data-state=\"waiting\"")
                    .doesNotContain("event-trace").doesNotContain("<b>x</b>");
        }
        try (ConsoleServer s = new ConsoleServer(db, b -> b.traceUrl("https://grafana.example/explore?orgId=1&traceId={traceId}"))) {
            assertThat(get(s.url() + "/events?id=" + traced, null).body()).contains("<code>" + traceId + "</code>")
                    .contains("<a href=\"https://grafana.example/explore?orgId=1&amp;traceId=" + traceId
                            + "\" target=\"_blank\" rel=\"noopener noreferrer\">Open in the tracing UI</a>");
        }
        for (String[] bad : new String[][] {{"https://jaeger.example/trace/", "has no {traceId}"},
                {"https://jaeger.example/{traceId}/{traceId}", "holds {traceId} 2 times"},
                {"/trace/{traceId}", "is not absolute"}, {"javascript:alert(1)//{traceId}", "not http or https"},
                {"https://jaeger example/{traceId}", "is not a URL"}}) {
            assertThatThrownBy(() -> Console.builder().traceUrl(bad[0])).as(bad[0]).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(bad[1]).hasMessageContaining("for example https://jaeger.example/trace/{traceId}");
        }
    }

    @Test
    void aReadOnlyConsoleRefusesEveryWrite(TestDatabase db) throws Exception {
        try (ConsoleServer s = new ConsoleServer(db, b -> b.operatorToken(ConsoleServer.OPERATOR, Secret.of(ConsoleServer.TOKEN)))) {
            String cookie = login(s);
            String csrf = csrfOf(get(s.url() + "/dead-letters", cookie).body());
            HttpResponse<String> r = post(s.url() + "/dead-letters/retry", cookie, "csrf=" + csrf + "&id=" + UUID.randomUUID(), null);
            assertThat(r.statusCode()).isEqualTo(403);
            assertThat(r.body()).contains("Write actions are off").contains("--console-write-actions");
        }
    }

    @Test
    void writesNeedASessionItsCsrfTokenAndTheSameOrigin(TestDatabase db) throws Exception {
        try (ConsoleServer s = new ConsoleServer(db, b -> b.writeActions(true)
                .operatorToken(ConsoleServer.OPERATOR, Secret.of(ConsoleServer.TOKEN)))) {
            String id = UUID.randomUUID().toString();
            HttpResponse<String> none = post(s.url() + "/dead-letters/retry", null, "id=" + id, null);
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(none.body()).contains("Log in first").contains("/console/login");

            HttpResponse<String> wrongToken = post(s.url() + "/login", null, "token=not-the-token", null);
            assertThat(wrongToken.statusCode()).isEqualTo(401);
            assertThat(wrongToken.headers().firstValue("Set-Cookie")).isEmpty();
            assertThat(wrongToken.body()).doesNotContain(ConsoleServer.TOKEN);

            String cookie = login(s);
            String page = get(s.url() + "/dead-letters", cookie).body();
            String csrf = csrfOf(page);
            assertThat(page).doesNotContain(ConsoleServer.TOKEN);

            HttpResponse<String> noCsrf = post(s.url() + "/dead-letters/retry", cookie, "id=" + id, null);
            assertThat(noCsrf.statusCode()).isEqualTo(403);
            assertThat(noCsrf.body()).contains("The form is stale");
            HttpResponse<String> wrongCsrf = post(s.url() + "/dead-letters/retry", cookie, "csrf=x" + csrf + "&id=" + id, null);
            assertThat(wrongCsrf.statusCode()).isEqualTo(403);

            HttpResponse<String> crossSite = post(s.url() + "/dead-letters/retry", cookie, "csrf=" + csrf + "&id=" + id,
                    "https://evil.example");
            assertThat(crossSite.statusCode()).isEqualTo(403);
            assertThat(crossSite.body()).contains("another site");

            String origin = "http://127.0.0.1:" + s.server.getAddress().getPort();
            HttpResponse<String> ok = post(s.url() + "/dead-letters/retry", cookie, "csrf=" + csrf + "&id=" + id, origin);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).contains("Retry:").contains("0 moved back to the outbox").contains("1 no longer parked").contains(id);

            HttpResponse<String> logout = post(s.url() + "/logout", cookie, "csrf=" + csrf, origin);
            assertThat(logout.statusCode()).isEqualTo(303);
            assertThat(post(s.url() + "/dead-letters/retry", cookie, "csrf=" + csrf + "&id=" + id, null).statusCode()).isEqualTo(401);
        }
    }

    @Test
    void aReasonIsDiscardedAsOneGroupWhateverItsNumbers(TestDatabase db) throws Exception {
        db.exec("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, created_at,"
                + " error_class, error_message, attempts, parked_by) VALUES"
                + " ('018f3a5e-7b2c-7d11-8a00-000000000401', 0, 'account', 'a', 'Opened', '{}', '{}', now(), 'E', 'record 123 too large', 1, 'r'),"
                + " ('018f3a5e-7b2c-7d11-8a00-000000000402', 0, 'account', 'b', 'Opened', '{}', '{}', now(), 'E', 'record 456 too large', 1, 'r'),"
                + " ('018f3a5e-7b2c-7d11-8a00-000000000403', 0, 'account', 'c', 'Opened', '{}', '{}', now(), 'F', 'other', 1, 'r')");
        try (ConsoleServer s = new ConsoleServer(db, b -> b.writeActions(true)
                .operatorToken(ConsoleServer.OPERATOR, Secret.of(ConsoleServer.TOKEN)))) {
            String cookie = login(s);
            String page = get(s.url() + "/dead-letters", cookie).body();
            assertThat(page).contains("record {} too large").contains("<strong class=\"group-count\">2</strong>");
            HttpResponse<String> discard = post(s.url() + "/dead-letters/discard", cookie, "csrf=" + csrfOf(page)
                    + "&errorClass=E&message=" + java.net.URLEncoder.encode("record {} too large", java.nio.charset.StandardCharsets.UTF_8)
                    + "&reason=test", null);
            assertThat(discard.statusCode()).isEqualTo(200);
            assertThat(discard.body()).contains("Discard:").contains("2 discarded")
                    .contains("018f3a5e-7b2c-7d11-8a00-000000000401").contains("018f3a5e-7b2c-7d11-8a00-000000000402");
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isEqualTo(1);
        }
    }

    @Test
    void theRunsPageNamesTheFixWhenTheJournalIsMissing(TestDatabase db) throws Exception {
        try (ConsoleServer s = new ConsoleServer(db, b -> b)) {
            assertThat(get(s.url() + "/runs", null).body()).contains("No reconciliation has run yet")
                    .contains("No retention round has run yet").contains("No dead letter has been retried or discarded")
                    .contains("aria-current=\"page\"");
            db.exec("DROP TABLE outbox_ops_journal");
            HttpResponse<String> r = get(s.url() + "/runs", null);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).contains("schema version 12").contains("outbox migrate --schema public");
        }
    }

    @Test
    void wrongTokensAreThrottledEvenBeforeTheRightOne(TestDatabase db) throws Exception {
        try (ConsoleServer s = new ConsoleServer(db, b -> b.operatorToken(ConsoleServer.OPERATOR, Secret.of(ConsoleServer.TOKEN)))) {
            for (int i = 0; i < 10; i++) {
                assertThat(post(s.url() + "/login", null, "token=guess-" + i, null).statusCode()).isEqualTo(401);
            }
            HttpResponse<String> throttled = post(s.url() + "/login", null, "token=" + ConsoleServer.TOKEN, null);
            assertThat(throttled.statusCode()).isEqualTo(429);
            assertThat(throttled.body()).contains("wait a minute");
            assertThat(throttled.headers().firstValue("Set-Cookie")).isEmpty();
        }
    }

    @Test
    void theSessionCookieIsHttpOnlySameSiteStrictAndScopedToTheConsole(TestDatabase db) throws Exception {
        try (ConsoleServer s = new ConsoleServer(db, b -> b.writeActions(true)
                .operatorToken(ConsoleServer.OPERATOR, Secret.of(ConsoleServer.TOKEN)))) {
            HttpResponse<String> r = post(s.url() + "/login", null, "token=" + ConsoleServer.TOKEN, null);
            assertThat(r.statusCode()).isEqualTo(303);
            String setCookie = r.headers().firstValue("Set-Cookie").orElseThrow();
            assertThat(setCookie).contains("HttpOnly").contains("SameSite=Strict").contains("Path=/console").contains("Max-Age=")
                    .doesNotContain("Secure").doesNotContain(ConsoleServer.TOKEN);
            Matcher m = Pattern.compile("outbox_console=([A-Za-z0-9_-]+)").matcher(setCookie);
            assertThat(m.find()).isTrue();
            assertThat(m.group(1)).hasSize(43); // 32 random bytes, base64url without padding
        }
    }

    private String login(ConsoleServer s) throws Exception {
        HttpResponse<String> r = post(s.url() + "/login", null, "token=" + ConsoleServer.TOKEN, null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
        return r.headers().firstValue("Set-Cookie").orElseThrow().split(";")[0];
    }

    private static String csrfOf(String page) {
        Matcher m = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"").matcher(page);
        assertThat(m.find()).as("a CSRF field on the page").isTrue();
        return m.group(1);
    }

    private HttpResponse<String> get(String url, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).GET();
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String url, String cookie, String form, String origin) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-www-form-urlencoded").POST(HttpRequest.BodyPublishers.ofString(form));
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        if (origin != null) {
            b.header("Origin", origin);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
