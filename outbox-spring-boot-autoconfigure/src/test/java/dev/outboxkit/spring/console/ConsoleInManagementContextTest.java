package dev.outboxkit.spring.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.testkit.TestDatabase;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The console in a Spring Boot application over real HTTP (Tomcat, Spring Security with its CSRF protection, PostgreSQL):
 * at /actuator/outboxkit-console, writes only for the role OUTBOX_OPERATOR, the trace of an event linked with
 * outboxkit.console.trace-url.
 */
@SpringBootTest(classes = ConsoleTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        ConsoleTestApplication.PROPERTIES_EXCLUDE,
        "spring.kafka.listener.auto-startup=false",
        "outboxkit.console.enabled=true",
        "outboxkit.console.write-actions=true",
        "outboxkit.console.trace-url=https://jaeger.example/trace/{traceId}"})
class ConsoleInManagementContextTest {

    static final String BASE = "/actuator/outboxkit-console";
    private static TestDatabase db;

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        db = ConsoleTestApplication.database(registry);
    }

    @LocalServerPort
    int port;

    @Test
    void theOverviewShowsWhatTheDatabaseHolds() throws Exception {
        long before = db.count("SELECT count(*) FROM outbox_event WHERE published_at IS NULL");
        for (int i = 0; i < 3; i++) {
            db.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'order', ?, 'Placed', '{}')",
                    UUID.randomUUID(), "o-" + i);
        }
        HttpResponse<String> overview = new ConsoleClient("viewer").get(port, BASE + "/");
        assertThat(overview.statusCode()).as(overview.body()).isEqualTo(200);
        assertThat(overview.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(v -> assertThat(v).contains("default-src 'self'"));
        assertThat(overview.body()).contains("<dd id=\"backlog-total\">" + (before + 3) + "</dd>").contains("Read-only");

        HttpResponse<String> anonymous = new ConsoleClient("nobody").get(port, BASE + "/");
        assertThat(anonymous.statusCode()).as("Spring Security guards the console like the rest").isEqualTo(401);
    }

    @Test
    void theEventPageLinksTheTraceThatWroteTheEvent() throws Exception {
        UUID id = UUID.randomUUID();
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        db.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, headers) VALUES"
                + " (?, 'order', 'o-t', 'Placed', '{}', jsonb_build_object('traceparent', ?::text))", id,
                "00-" + traceId + "-00f067aa0ba902b7-01");
        HttpResponse<String> page = new ConsoleClient("viewer").get(port, BASE + "/events?id=" + id);
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        assertThat(page.body()).contains("<code>" + traceId + "</code>")
                .contains("href=\"https://jaeger.example/trace/" + traceId + "\"");
    }

    @Test
    void aUserWithTheRoleRetriesADeadLetterThroughSpringSecuritysCsrfCheck() throws Exception {
        UUID id = UUID.randomUUID();
        ConsoleTestApplication.park(db, id, 800_001);
        ConsoleClient oper = new ConsoleClient("oper");
        HttpResponse<String> page = oper.get(port, BASE + "/dead-letters");
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        assertThat(page.body()).contains("Logged in as <strong>oper</strong>").doesNotContain("do-not-print");
        String rows = rowsOfTheFirstReason(oper, page.body());
        Map<String, String> retry = ConsoleClient.form(rows, BASE + "/dead-letters/retry", "value=\"" + id + "\"");
        assertThat(retry).as("the Retry form of %s in%n%s", id, rows).isNotNull();
        assertThat(retry).containsKeys("csrf", "_csrf", "id");

        Map<String, String> withoutSpringsToken = new java.util.LinkedHashMap<>(retry);
        withoutSpringsToken.remove("_csrf");
        HttpResponse<String> refused = oper.postForm(port, BASE + "/dead-letters/retry", withoutSpringsToken);
        // Refused by Spring Security's CSRF filter before the console sees it; whether the answer ends as 403 or 401
        // depends on how the application secures its error dispatch (this one answers 401).
        assertThat(refused.statusCode()).as("Spring Security refuses a form without its token").isIn(401, 403);
        assertThat(refused.body()).doesNotContain("outboxkit console");
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", id)).isEqualTo(1);

        HttpResponse<String> done = oper.postForm(port, BASE + "/dead-letters/retry", retry);
        assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
        assertThat(done.body()).contains("id=\"outcome\"").contains(id.toString()).contains("1 moved back to the outbox");
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", id)).isZero();
        assertThat(db.count("SELECT seq FROM outbox_event WHERE id = ?", id)).as("back at its seq").isEqualTo(800_001);
    }

    @Test
    void aUserWithoutTheRoleSeesNoRetryButtonAndIsRefused() throws Exception {
        UUID id = UUID.randomUUID();
        ConsoleTestApplication.park(db, id, 800_002);
        ConsoleClient viewer = new ConsoleClient("viewer");
        HttpResponse<String> page = viewer.get(port, BASE + "/dead-letters");
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        assertThat(page.body()).doesNotContain("class=\"retry\"").doesNotContain("/dead-letters/retry")
                .contains("Retry and discard need an operator authenticated by the application");
        String rows = rowsOfTheFirstReason(viewer, page.body());
        assertThat(rows).contains(id.toString()).doesNotContain("class=\"retry\"").doesNotContain("/dead-letters/retry");

        JsonNode token = new ObjectMapper().readTree(viewer.get(port, "/csrf").body());
        HttpResponse<String> refused = viewer.postForm(port, BASE + "/dead-letters/retry",
                Map.of(token.get("parameterName").asText(), token.get("token").asText(), "id", id.toString(), "csrf", "guess"));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(403);
        assertThat(refused.body()).contains("OUTBOX_OPERATOR");
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", id)).as("still parked").isEqualTo(1);
    }

    /** The dead-letter page loads each reason's rows after it is shown (hx-get): fetch the first reason's as the browser does. */
    private String rowsOfTheFirstReason(ConsoleClient client, String deadLetterPage) throws Exception {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("hx-get=\"([^\"]*/fragments/reason-rows[^\"]*)\"").matcher(deadLetterPage);
        assertThat(m.find()).as("a reason whose rows load after the page in%n%s", deadLetterPage).isTrue();
        HttpResponse<String> rows = client.get(port, m.group(1).replace("&amp;", "&"));
        assertThat(rows.statusCode()).as(rows.body()).isEqualTo(200);
        return rows.body();
    }
}
