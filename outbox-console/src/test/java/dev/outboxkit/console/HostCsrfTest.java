package dev.outboxkit.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A host framework's own CSRF token ({@link ConsoleRequest#withHostCsrf}) rides in every POST form of the page, next
 * to the console's, escaped; without one the forms carry only the console's.
 */
@ExtendWith(OutboxTestkitExtension.class)
class HostCsrfTest {

    @Test
    void everyFormCarriesTheHostsTokenWhenTheRequestHasOne(TestDatabase db) throws Exception {
        db.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, created_at,"
                + " error_class, error_message, attempts, parked_by) VALUES (?, 900001, 'account', 'a1', 'Opened', '{}', '{}', now(),"
                + " 'org.apache.kafka.common.errors.RecordTooLargeException', 'too large', 3, 'relay-1')", UUID.randomUUID());
        try (Console console = Console.builder().admin(OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build())
                .writeActions(true).build()) {
            ConsoleRequest page = get("/console/dead-letters", Map.of()).withOperator("alice");
            ConsoleRequest rows = get("/console/fragments/reason-rows", Map.of("errorClass",
                    List.of("org.apache.kafka.common.errors.RecordTooLargeException"), "message", List.of("too large")))
                    .withOperator("alice");

            String pageWithHost = console.handle(page.withHostCsrf("_csrf", "t<\"1")).bodyText();
            String rowsWithHost = console.handle(rows.withHostCsrf("_csrf", "t<\"1")).bodyText();
            assertThat(count(pageWithHost, "<form method=\"post\"")).as("Retry and Discard of the reason, and Log out")
                    .isGreaterThanOrEqualTo(2);
            assertThat(count(rowsWithHost, "<form method=\"post\"")).as("Retry and Discard of the row").isEqualTo(2);
            for (String html : List.of(pageWithHost, rowsWithHost)) {
                long forms = count(html, "<form method=\"post\"");
                assertThat(count(html, "<input type=\"hidden\" name=\"_csrf\" value=\"t&lt;&#34;1\">")).isEqualTo(forms);
                assertThat(count(html, "<input type=\"hidden\" name=\"csrf\" ")).isEqualTo(forms);
            }

            for (ConsoleRequest r : List.of(page, rows)) {
                String without = console.handle(r).bodyText();
                assertThat(count(without, "<form method=\"post\"")).isGreaterThanOrEqualTo(2);
                assertThat(without).doesNotContain("name=\"_csrf\"");
            }
        }
        assertThatThrownBy(() -> get("/console/", Map.of()).withHostCsrf(" ", "t"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("parameter name");
    }

    private static long count(String text, String literal) {
        return Pattern.compile(Pattern.quote(literal)).matcher(text).results().count();
    }

    private static ConsoleRequest get(String path, Map<String, List<String>> query) {
        return new ConsoleRequest("GET", path, query, Map.of(), Map.of(), false, null);
    }
}
