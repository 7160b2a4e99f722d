package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.History;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Issue 8's security checks: hostile identifiers refused at every configuration entry point, and
 * no secret or payload in the logs of a whole run. (Least privilege is not a separate test: every
 * {@link Harness} runs writers, relays and consumer as roles with only the documented grants.)
 */
class SecurityTest {

    /** Inputs that try to break out of an identifier (SQL injection, quoting, control characters, length). */
    static final List<String> HOSTILE_IDENTIFIERS = List.of(
            "public; DROP TABLE outbox_event",
            "public\"; DROP SCHEMA public CASCADE; --",
            "x' OR '1'='1",
            "\"quoted\"",
            "outbox--",
            "public.outbox_event",
            "sch\u0000ema",
            "a\nb",
            "$1",
            "ščhema",
            "Robert'); DELETE FROM processed_event;--",
            "select",
            "a".repeat(64),
            "",
            "   ");

    /** Topic names and route templates that must not reach Kafka. */
    static final List<String> HOSTILE_TOPICS = List.of(
            "orders; rm -rf /",
            "../../etc/passwd",
            "topic with space",
            "tópic",
            "a".repeat(250),
            "",
            "orders\u0000");

    private final List<String> accepted = new ArrayList<>();

    private void refused(String setting, String hostile, Runnable build) {
        String shown = setting + " = <" + hostile.replace("\u0000", "\\0").replace("\n", "\\n") + ">";
        try {
            build.run();
            accepted.add(shown + " was accepted");
        } catch (IllegalArgumentException e) {
            if (e.getMessage() == null || !e.getMessage().contains(setting)) {
                accepted.add(shown + " refused without naming the setting: " + e.getMessage());
            }
        } catch (RuntimeException e) {
            accepted.add(shown + " failed with " + e);
        }
    }

    @Test
    void hostileIdentifiersAreRefusedAtEveryConfigurationEntryPoint() {
        int checked = 0;
        for (String h : HOSTILE_IDENTIFIERS) {
            refused("schema", h, () -> PollingRelay.builder().jdbcUrl("jdbc:postgresql://127.0.0.1:1/x").user("u")
                    .password(Secret.of("p")).bootstrapServers("127.0.0.1:1").schema(h).build());
            refused("schema", h, () -> cdc(b -> b.schema(h)));
            refused("slot", h, () -> cdc(b -> b.slotName(h)));
            refused("publication", h, () -> cdc(b -> b.publicationName(h)));
            refused("schema", h, () -> OutboxWriter.builder().schema(h).build());
            refused("schema", h, () -> DedupeConsumer.builder().bootstrapServers("127.0.0.1:1").group("g")
                    .topics(List.of("t")).dataSource(new org.postgresql.ds.PGSimpleDataSource())
                    .handler((c, e) -> { }).schema(h).build());
            checked += 6;
        }
        for (String h : HOSTILE_TOPICS) {
            refused("topic", h, () -> OutboxMessage.builder("order", "1", "Placed").payloadJson("{}").topic(h).build());
            refused("route", h, () -> TopicRoute.of(h));
            if (!h.isEmpty()) {   // a template around an aggregate type: the hostile part must still be refused
                refused("route", h, () -> TopicRoute.of("outbox.${aggregateType}" + h));
            }
            checked += 3;
        }
        refused("route", "${unknown}", () -> TopicRoute.of("outbox.${unknown}"));
        assertThat(accepted).as("hostile values not refused with a clear error").isEmpty();
        System.out.println("RELIABILITY security: " + checked + " hostile configuration values refused");
    }

    private static void cdc(Consumer<CdcRelay.Builder> hostile) {
        CdcRelay.Builder b = CdcRelay.builder().jdbcUrl("jdbc:postgresql://127.0.0.1:1/x").user("u")
                .password(Secret.of("p")).bootstrapServers("127.0.0.1:1");
        hostile.accept(b);
        b.build();
    }

    /**
     * A whole run (in-process relay and consumer as least-privileged roles, with a
     * {@code sasl.jaas.config} holding a password in the Kafka settings of both, Kafka's own
     * config dumps at INFO): no log event at INFO or above carries a database password, the JAAS
     * secret or a payload.
     */
    @Test
    void logsOfARunContainNoPasswordNoJaasSecretAndNoPayload() throws Exception {
        String jaasSecret = "jaas-secret-" + UUID.randomUUID();
        String jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"svc\" password=\""
                + jaasSecret + "\";";
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Logger kafkaLogger = context.getLogger("org.apache.kafka");
        Level kafkaLevel = kafkaLogger.getLevel();
        ListAppender<ILoggingEvent> capture = new ListAppender<>();
        capture.setContext(context);
        capture.start();
        root.addAppender(capture);
        kafkaLogger.setLevel(Level.INFO);   // ProducerConfig/ConsumerConfig dumps include sasl.jaas.config
        List<String> leaks = new ArrayList<>();
        int checkedEvents = 0;
        try (Harness p = new Harness("security", 0, RelayKind.POLL, Map.of("sasl.jaas.config", jaas))) {
            try (PollingRelay relay = PollingRelay.builder()
                    .jdbcUrl(p.db.jdbcUrl()).user(p.relayRole).password(Secret.of(p.relayPassword))
                    .bootstrapServers(p.env.kafka.bootstrapServers())
                    .producerOverrides(Map.of("sasl.jaas.config", jaas))
                    .route(TopicRoute.of(p.topic))
                    .leaseDuration(Harness.RELAY_LEASE)
                    .build()) {
                relay.start();
                p.startWriters(2, Duration.ofMillis(10));
                await().atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > 300);
                History.Report report = p.healDrainAndCheck();
                assertThat(report.ok()).as(report.summary()).isTrue();
            }
            List<String> secrets = List.of(p.relayPassword, p.consumerPassword, p.appPassword, jaasSecret,
                    Harness.PAYLOAD_MARKER);
            for (ILoggingEvent e : List.copyOf(capture.list)) {
                if (!e.getLevel().isGreaterOrEqual(Level.INFO)) {
                    continue;
                }
                checkedEvents++;
                String text = e.getFormattedMessage()
                        + (e.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(e.getThrowableProxy()));
                for (String s : secrets) {
                    if (text.contains(s)) {
                        leaks.add(e.getLoggerName() + ": " + text);
                    }
                }
            }
            assertThat(capture.list).as("the capture saw Kafka's config dump (so it would see a leak)")
                    .anyMatch(e -> e.getFormattedMessage().contains("sasl.jaas.config"));
            assertThat(capture.list).as("the capture saw the relay start")
                    .anyMatch(e -> e.getFormattedMessage().contains("poll relay"));
        } finally {
            root.detachAppender(capture);
            kafkaLogger.setLevel(kafkaLevel);
        }
        System.out.println("RELIABILITY security: " + checkedEvents + " log events at INFO+ checked, leaks=" + leaks.size());
        assertThat(leaks).as("log lines with a secret or payload").isEmpty();
    }
}
