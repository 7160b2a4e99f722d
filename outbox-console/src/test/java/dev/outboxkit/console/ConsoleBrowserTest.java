package dev.outboxkit.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.ops.reconcile.ConsumerSource;
import dev.outboxkit.ops.reconcile.IntentLedger;
import dev.outboxkit.ops.reconcile.Reconciler;
import dev.outboxkit.ops.retention.Retention;
import dev.outboxkit.ops.retention.RetentionSchedule;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.slf4j.LoggerFactory;

/**
 * The console in a real browser (headless chromium) on real PostgreSQL 17 and, for the poison event, a real Kafka and
 * polling relay. Each test waits on what the page shows, with a deadline. Screenshots go to target/console-screenshots.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ConsoleBrowserTest {

    private static final Duration PAGE = Duration.ofSeconds(30);
    private static ChromeDriver browser;

    @BeforeAll
    static void startBrowser() {
        browser = Browser.start();
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    @Test
    void theOverviewShowsTheBacklogAndTheLeasesTheDatabaseHoldsAndRefreshesWithoutAReload(TestDatabase db) throws Exception {
        for (int i = 0; i < 3; i++) {
            insert(db, "order", "o-" + i, "{\"n\": " + i + "}");
        }
        db.exec("INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at) VALUES "
                + "('poll/0', 'relay-a', 7, now() + interval '1 hour'), ('poll/1', 'relay-b', 3, now() - interval '1 minute')",
                "INSERT INTO outbox_relay_member (member_id, partitions, expires_at) VALUES ('relay-a', 2, now() + interval '1 hour'),"
                        + " ('relay-c', 2, now() + interval '1 hour')");
        // What relays in other processes report of themselves: relay-a publishing, a CDC standby that is not ready.
        db.exec("INSERT INTO outbox_relay_report (instance_id, relay, host, started_at, reported_at, expires_at, ready, problem,"
                + " published, last_published_at) VALUES ('relay-a', 'poll', 'node-1', now() - interval '1 hour', now(),"
                + " now() + interval '1 hour', true, NULL, 1234, now() - interval '2 seconds'),"
                + " ('cdc-standby', 'cdc', 'node-2', now() - interval '1 hour', now(), now() + interval '1 hour', false,"
                + " 'Kafka refuses writes: NOT_ENOUGH_REPLICAS', 0, NULL)");
        Relay.Health health = new Relay.Health(true, true, "polling 2 partitions");
        SimpleMeterRegistry relayMeters = new SimpleMeterRegistry();
        relayMeters.counter("outbox.relay.published", "relay", "poll").increment(40);
        try (ConsoleServer s = new ConsoleServer(db, b -> b.relayHealth(() -> health).meterRegistry(relayMeters))) {
            Browser.browserErrors(browser); // what earlier tests left
            browser.get(s.url() + "/");
            wait(PAGE).until(ExpectedConditions.textToBe(By.id("backlog-total"), "3"));
            assertThat(browser.findElement(By.tagName("html")).getAttribute("lang")).isEqualTo("en");
            assertThat(browser.findElements(By.tagName("h1"))).hasSize(1);
            WebElement a = browser.findElement(By.cssSelector("table.leases[data-holder='relay-a']"));
            assertThat(a.findElement(By.tagName("caption")).getText()).contains("relay-a").contains("holder").contains("1 valid lease");
            assertThat(a.getText()).contains("poll/0").contains("7").contains("✓ valid");
            assertThat(a.findElement(By.tagName("caption")).getText()).contains("2 partitions").contains("heartbeat");
            // the backlog by partition, split by the live members' count: poll/0 and poll/1 hold all of it
            long split = browser.findElements(By.cssSelector("td[data-partition-backlog]")).stream()
                    .mapToLong(td -> Long.parseLong(td.getText().replace(",", ""))).sum();
            assertThat(split).isEqualTo(3);
            WebElement b = browser.findElement(By.cssSelector("table.leases[data-holder='relay-b']"));
            assertThat(b.findElement(By.tagName("caption")).getText()).as("an expired lease and no live membership").contains("gone");
            assertThat(b.getText()).contains("✗ expired");
            WebElement c = browser.findElement(By.cssSelector("table.leases[data-holder='relay-c']"));
            assertThat(c.findElement(By.tagName("caption")).getText()).as("a live member without a lease")
                    .contains("standby").contains("0 valid leases");
            assertThat(a.findElement(By.cssSelector("span.report")).getText()).contains("polling relay on node-1")
                    .contains("✓ ready").contains("last published").contains("1,234 since it started");
            WebElement cdc = browser.findElement(By.cssSelector("table.leases[data-holder='cdc-standby']"));
            assertThat(cdc.findElement(By.tagName("caption")).getText()).as("a CDC standby, seen through its report only")
                    .contains("standby").contains("CDC relay on node-2").contains("✗ not ready")
                    .contains("NOT_ENOUGH_REPLICAS").contains("nothing published since it started");
            assertThat(browser.findElements(By.id("no-reports"))).as("the schema keeps reports").isEmpty();
            assertThat(browser.findElement(By.id("backlog-by-topic")).getText()).contains("order").contains("3");
            assertThat(browser.findElement(By.id("relay-health")).getText()).contains("✓ ready").contains("polling 2 partitions");
            assertThat(browser.findElement(By.id("dead-letter-count")).getText()).isEqualTo("0");
            assertThat(browser.findElement(By.id("database-took")).getText()).matches("[0-9]+ ms");
            assertThat(browser.findElements(By.id("no-relay-here"))).as("a relay runs in this process").isEmpty();
            // The chart is drawn from the samples the console took (uPlot puts a canvas in its box).
            wait(PAGE).until(d -> !d.findElements(By.cssSelector("#backlog-chart canvas")).isEmpty());
            wait(PAGE).until(d -> !d.findElements(By.cssSelector("#publish-chart canvas")).isEmpty());
            assertThat(browser.findElement(By.id("publish-chart")).getAttribute("data-label")).as("charted from the reports")
                    .contains("every relay instance");

            // htmx polls the fragment: a new event shows up without a reload (the marker set in this page survives).
            browser.executeScript("window.__consoleMarker = 'same page';");
            insert(db, "order", "o-3", "{}");
            wait(Duration.ofSeconds(40)).until(ExpectedConditions.textToBe(By.id("backlog-total"), "4"));
            assertThat(browser.executeScript("return window.__consoleMarker;")).isEqualTo("same page");
            // htmx, uPlot and the console's script ran under the CSP without a violation or an error
            assertThat(Browser.browserErrors(browser)).isEmpty();
            Browser.screenshot(browser, "overview");
        }
    }

    @Test
    void aPoisonEventAppearsUnderItsReasonAndIsRetriedFromTheBrowserAfterTheFix(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("console-poison");
        // Kafka refuses records over 1 KiB on this topic: the cause the operator fixes.
        kafka.createTopic(topic, 1, (short) -1, Map.of("max.message.bytes", "1024"));
        Logger audit = (Logger) LoggerFactory.getLogger(OutboxAdmin.AUDIT_LOGGER);
        ListAppender<ILoggingEvent> auditLines = new ListAppender<>();
        auditLines.start();
        audit.addAppender(auditLines);
        try (PollingRelay relay = PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(kafka.bootstrapServers())
                .route(TopicRoute.of(topic))
                .parkPolicy(ParkPolicy.HOLD_AGGREGATE)
                .leaseDuration(Duration.ofSeconds(30))
                .build();
             ConsoleServer s = new ConsoleServer(db, b -> b.writeActions(true).relayHealth(relay::health)
                     .operatorToken(ConsoleServer.OPERATOR, Secret.of(ConsoleServer.TOKEN)))) {
            relay.start();
            // Random text: the producer compresses, and a repeated letter would fit in 1 KiB.
            UUID poison = insert(db, "account", "A", "{\"blob\": \"" + randomText(20_000) + "\"}");
            await().atMost(Duration.ofSeconds(90)).until(() -> db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", poison) == 1);

            // Not logged in: the reason and the row are shown, the Retry button is not.
            browser.manage().deleteAllCookies();
            browser.get(s.url() + "/dead-letters");
            WebElement group = wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("section.group")));
            assertThat(group.findElement(By.className("error-class")).getText()).endsWith("RecordTooLargeException");
            assertThat(group.findElement(By.className("group-count")).getText()).isEqualTo("1");
            // the rows arrive after the page (htmx loads them per reason)
            WebElement row = wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("tr[data-id='" + poison + "']")));
            assertThat(row.getText()).contains("account/A");
            assertThat(browser.findElements(By.cssSelector("button.retry"))).isEmpty();
            assertThat(browser.findElement(By.cssSelector("main")).getText()).contains("Log in");

            browser.get(s.url() + "/login");
            browser.findElement(By.id("token")).sendKeys(ConsoleServer.TOKEN);
            browser.findElement(By.cssSelector("form.login button")).click();
            wait(PAGE).until(ExpectedConditions.textToBePresentInElementLocated(By.id("operator"), ConsoleServer.OPERATOR));
            wait(PAGE).until(ExpectedConditions.elementToBeClickable(By.cssSelector("tr[data-id='" + poison + "'] button.retry")));
            Browser.screenshot(browser, "dead-letters");

            kafka.alterTopicConfig(topic, Map.of("max.message.bytes", "1048576"));
            browser.findElement(By.cssSelector("tr[data-id='" + poison + "'] button.retry")).click();
            WebElement outcome = wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("outcome")));
            assertThat(outcome.getText()).contains("Retry: 1 moved back to the outbox").contains(poison.toString());
            Browser.screenshot(browser, "dead-letters-retried");

            // The relay in this process reports itself like any other instance of the fleet.
            browser.get(s.url() + "/");
            WebElement report = wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(
                    By.cssSelector("span.report[data-ready='true']")));
            assertThat(report.getText()).contains("polling relay").contains("✓ ready");

            // The relay publishes it now; the dead-letter page is empty and the audit names the session's operator.
            await().atMost(Duration.ofSeconds(90)).until(() -> db.count("SELECT count(*) FROM outbox_event WHERE published_at IS NULL") == 0
                    && db.count("SELECT count(*) FROM outbox_dead_letter") == 0);
            browser.get(s.url() + "/dead-letters");
            wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("no-dead-letters")));
            assertThat(auditLines.list).anySatisfy(e -> assertThat(e.getFormattedMessage()).contains(poison.toString())
                    .contains(ConsoleServer.OPERATOR));
            assertThat(auditLines.list).noneSatisfy(e -> assertThat(e.getFormattedMessage()).contains(ConsoleServer.TOKEN));
        } finally {
            audit.detachAppender(auditLines);
        }
    }

    @Test
    void anEventIsFoundInEachStateThePageKnows(TestDatabase db) throws Exception {
        UUID waiting = insert(db, "order", "w", "{}");
        UUID published = insert(db, "order", "p", "{}");
        db.execute("UPDATE outbox_event SET published_at = now() WHERE id = ?", published);
        UUID parked = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000201");
        db.exec("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, "
                + "created_at, error_class, error_message, attempts, parked_by) VALUES ('" + parked + "', 0, 'account', 'k', "
                + "'Opened', '{\"secret\": \"payload-text\"}', '{}', now(), 'org.apache.kafka.common.errors.InvalidTopicException', "
                + "'Invalid topic', 3, 'relay-1')");
        UUID applied = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000202");
        db.execute("INSERT INTO processed_event (consumer_group, event_id, topic, kafka_partition, kafka_offset)"
                + " VALUES ('billing', ?, 'orders.v2', 3, 4711)", applied);
        UUID unknown = UUID.fromString("018f3a5e-7b2c-7d11-8a00-0000000002ff");
        try (ConsoleServer s = new ConsoleServer(db, b -> b)) {
            assertState(s, parked, "parked", "Dead-lettered");
            assertThat(browser.findElement(By.id("event-reason")).getText()).contains("InvalidTopicException").contains("Invalid topic");
            assertThat(browser.findElement(By.tagName("main")).getText()).doesNotContain("payload-text");
            Browser.screenshot(browser, "event-parked");
            assertState(s, waiting, "waiting", "Waiting in the outbox table since");
            assertThat(browser.findElement(By.id("event-outbox")).getText()).contains("order/w").contains("Failed attempts 0");
            assertState(s, published, "published", "Published");
            assertState(s, applied, "applied", "Published and applied by 1 consumer group");
            assertThat(browser.findElement(By.id("event-applications")).getText()).contains("billing").contains("orders.v2")
                    .contains("3").contains("4711");
            Browser.screenshot(browser, "event-applied");
            assertState(s, unknown, "not-found", "Not found");

            browser.get(s.url() + "/events");
            WebElement input = browser.findElement(By.id("event-id"));
            assertThat(browser.findElement(By.cssSelector("label[for='event-id']")).getText()).isEqualTo("Event id");
            input.sendKeys("not-a-uuid");
            browser.findElement(By.cssSelector("form.search button")).click();
            wait(PAGE).until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector("p.error"), "is not an event id"));
        }
    }

    @Test
    void anIdempotencyKeyShowsItsStateAndStatusNeverItsResponse(TestDatabase db) throws Exception {
        db.exec("INSERT INTO idempotency_key (scope, idem_key, request_hash, state, response_status, response_body, created_at,"
                + " completed_at) VALUES ('checkout', 'order-42', sha256('req'::bytea), 'completed', 201,"
                + " 'card 4111 1111'::bytea, now() - interval '1 hour', now() - interval '59 minutes')");
        try (ConsoleServer s = new ConsoleServer(db, b -> b)) {
            browser.get(s.url() + "/idempotency");
            assertThat(browser.findElement(By.cssSelector("label[for='key-scope']")).getText()).isEqualTo("Scope");
            browser.findElement(By.id("key-scope")).sendKeys("checkout");
            browser.findElement(By.id("key-key")).sendKeys("order-42");
            browser.findElement(By.cssSelector("form.search button")).click();
            WebElement result = wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("key-result")));
            assertThat(result.getAttribute("data-state")).isEqualTo("completed");
            assertThat(browser.findElement(By.id("key-status")).getText()).isEqualTo("201");
            assertThat(browser.findElement(By.tagName("main")).getText()).contains("1h 00m").doesNotContain("4111");
            Browser.screenshot(browser, "idempotency");

            browser.get(s.url() + "/idempotency?scope=checkout&key=order-43");
            assertThat(wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("key-result"))).getAttribute("data-state"))
                    .isEqualTo("not-found");
        }
    }

    @Test
    void withoutALoginNoWriteIsOfferedAndAFormPostedWithoutASessionIsRefused(TestDatabase db) throws Exception {
        UUID parked = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000301");
        park(db, parked);
        try (ConsoleServer s = writableServer(db)) {
            browser.manage().deleteAllCookies();
            browser.get(s.url() + "/dead-letters");
            wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("tr[data-id='" + parked + "']")));
            assertThat(browser.findElements(By.cssSelector("button.retry, button.discard, button.retry-group"))).isEmpty();

            // A form another page would post (no session, no CSRF token): refused with what to do.
            browser.executeScript("var f = document.createElement('form'); f.method = 'post'; f.action = arguments[0];"
                    + "var i = document.createElement('input'); i.type = 'hidden'; i.name = 'id'; i.value = arguments[1];"
                    + "f.appendChild(i); document.body.appendChild(f); f.submit();", s.url() + "/dead-letters/retry", parked.toString());
            WebElement refusal = wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("message")));
            assertThat(refusal.getAttribute("data-status")).isEqualTo("401");
            assertThat(refusal.getText()).contains("Log in at /console/login");
            Browser.screenshot(browser, "refused");
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", parked)).isEqualTo(1);
        }
    }

    /**
     * The Runs page after an operator's retry in the browser, a reconciliation run that finds an effect without an
     * intent and a stuck intent, and a scheduled retention round: each read back from the operations journal.
     */
    @Test
    void theRunsPageShowsTheLastReconciliationTheLastRetentionRoundAndWhoRetriedWhat(TestDatabase db) throws Exception {
        UUID parked = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000401");
        park(db, parked);
        try (ConsoleServer s = writableServer(db)) {
            browser.manage().deleteAllCookies();
            browser.get(s.url() + "/runs");
            assertThat(wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("runs-reconcile"))).getText())
                    .contains("No reconciliation has run yet");

            browser.get(s.url() + "/login");
            browser.findElement(By.id("token")).sendKeys(ConsoleServer.TOKEN);
            browser.findElement(By.cssSelector("form.login button")).click();
            wait(PAGE).until(ExpectedConditions.elementToBeClickable(By.cssSelector("tr[data-id='" + parked + "'] button.retry")))
                    .click();
            wait(PAGE).until(ExpectedConditions.textToBePresentInElementLocated(By.id("outcome"), "1 moved back"));

            // A stuck intent (written two hours ago, never published) and an effect without an intent.
            new IntentLedger(db.dataSource(), "public").enable();
            db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at) VALUES"
                    + " ('018f3a5e-7b2c-7d11-8a00-000000000402', 'order', 'o-1', 'OrderPlaced', '{}', now() - interval '2 hours')");
            UUID phantom = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000403");
            db.execute("INSERT INTO processed_event (consumer_group, event_id) VALUES ('billing', ?)", phantom);
            Reconciler.builder().outboxDatabase(db.dataSource(), "public").actor("outbox-cli ops@batch-1")
                    .consumer(new ConsumerSource("billing-db", db.dataSource(), "public", List.of("billing"))).build().run();
            try (RetentionSchedule schedule = RetentionSchedule.builder().interval(Duration.ofHours(1))
                    .retention(Retention.builder().outboxDatabase(db.dataSource(), "public").deadLetterRetention(Duration.ofDays(30))
                            .actor("outbox-cli relay@node-1").build()).build()) {
                assertThat(schedule.runOnce()).isEqualTo(RetentionSchedule.Outcome.SUCCESS);
            }

            browser.findElement(By.linkText("Runs")).click();
            WebElement reconcile = wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("runs-counts")));
            assertThat(reconcile.findElement(By.cssSelector("tr[data-kind='phantom']")).getText())
                    .startsWith("Effects without an intent").endsWith("1");
            assertThat(reconcile.findElement(By.cssSelector("tr[data-kind='lost']")).getText()).endsWith("1");
            assertThat(reconcile.findElement(By.cssSelector("tr[data-kind='duplicate_effect']")).getText())
                    .startsWith("Intents with two effects").endsWith("0");
            assertThat(browser.findElement(By.id("runs-reconcile")).getText()).contains("outbox-cli ops@batch-1")
                    .contains("1 lost, 1 phantom");
            assertThat(browser.findElement(By.id("runs-purged")).findElement(By.cssSelector("tr[data-store='dead_letters']"))
                    .getText()).startsWith("Dead letters").endsWith("0");
            assertThat(browser.findElement(By.id("runs-retention")).getText()).contains("outbox-cli relay@node-1");
            assertThat(browser.findElement(By.id("runs-next")).getText()).contains("(in 59m");
            WebElement action = browser.findElement(By.cssSelector("#runs-actions tbody tr"));
            assertThat(action.getText()).contains(ConsoleServer.OPERATOR).contains("retry").contains("success")
                    .contains(parked.toString());
            assertThat(browser.findElements(By.tagName("h1"))).hasSize(1);
            assertThat(Browser.browserErrors(browser)).isEmpty();
            Browser.screenshot(browser, "runs");

            // Each finding's event id leads to where the event is.
            browser.findElement(By.cssSelector("#runs-findings a[href$='" + phantom + "']")).click();
            assertThat(wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("event-result")))
                    .getAttribute("data-state")).isEqualTo("applied");
            WebElement reconciled = browser.findElement(By.id("event-reconciled"));
            assertThat(reconciled.getAttribute("data-verdict")).isEqualTo("finding");
            assertThat(reconciled.getText()).contains("outbox-cli ops@batch-1").contains("phantom");
        }
    }

    private static void assertState(ConsoleServer s, UUID id, String state, String headline) {
        browser.get(s.url() + "/events?id=" + id);
        WebElement result = wait(PAGE).until(ExpectedConditions.visibilityOfElementLocated(By.id("event-result")));
        assertThat(result.getAttribute("data-state")).as(id.toString()).isEqualTo(state);
        assertThat(browser.findElement(By.id("event-headline")).getText()).startsWith(headline);
    }

    /** A dead letter of one row with an empty payload, parked by relay-1. */
    private static void park(TestDatabase db, UUID id) throws Exception {
        db.exec("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, "
                + "created_at, error_class, error_message, attempts, parked_by) VALUES ('" + id + "', 0, 'account', 'k', "
                + "'Opened', '{}', '{}', now(), 'E', 'm', 1, 'relay-1')");
    }

    /** The console with write actions on and the built-in login. */
    private static ConsoleServer writableServer(TestDatabase db) throws Exception {
        return new ConsoleServer(db, b -> b.writeActions(true).operatorToken(ConsoleServer.OPERATOR, Secret.of(ConsoleServer.TOKEN)));
    }

    private static WebDriverWait wait(Duration d) {
        return new WebDriverWait(browser, d);
    }

    private static UUID insert(TestDatabase db, String type, String aggregate, String payload) throws Exception {
        try (Connection c = db.connect()) {
            return OutboxRows.insert(c, type, aggregate, payload);
        }
    }

    private static String randomText(int length) {
        java.util.Random random = new java.util.Random(42);
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append((char) ('a' + random.nextInt(26)));
        }
        return sb.toString();
    }
}
