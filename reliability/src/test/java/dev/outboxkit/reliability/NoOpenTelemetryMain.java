package dev.outboxkit.reliability;

import static org.awaitility.Awaitility.await;

import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A child JVM without OpenTelemetry on its class path ({@link TracingEndToEndTest}): the writer writes, the
 * polling relay publishes, the consumer applies, and a CDC relay is built; none may need an OpenTelemetry class.
 * Prints {@code NO-OTEL OK} and exits 0, or fails with the error.
 *
 * <p>Arguments: jdbc URL, user, password, bootstrap servers, topic.
 */
public final class NoOpenTelemetryMain {

    private NoOpenTelemetryMain() {
    }

    public static void main(String[] args) throws Exception {
        try {
            Class.forName("io.opentelemetry.api.OpenTelemetry");
            throw new IllegalStateException("OpenTelemetry is on this JVM's class path; the check proves nothing");
        } catch (ClassNotFoundException expected) {
            // as intended
        }
        String url = args[0];
        String user = args[1];
        String password = args[2];
        String bootstrap = args[3];
        String topic = args[4];
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser(user);
        ds.setPassword(password);

        OutboxMessage message = OutboxMessage.builder("account", "acc-1", "Opened").payloadJson("{}").build();
        OutboxWriter.builder().build().inTransaction(ds, (c, tx) -> tx.add(message));
        Set<String> handled = ConcurrentHashMap.newKeySet();
        try (PollingRelay relay = PollingRelay.builder().jdbcUrl(url).user(user).password(Secret.of(password))
                .bootstrapServers(bootstrap).route(TopicRoute.of(topic)).instanceId("no-otel").build();
             DedupeConsumer consumer = DedupeConsumer.builder().bootstrapServers(bootstrap)
                     .kafkaProperties(Map.of("session.timeout.ms", "10000", "heartbeat.interval.ms", "1000"))
                     .group("g-" + topic).topics(List.of(topic)).dataSource(ds).pollTimeout(Duration.ofMillis(100))
                     .handler((c, event) -> handled.add(event.id().toString())).build()) {
            relay.start();
            consumer.start();
            await().atMost(Duration.ofSeconds(120)).until(() -> handled.contains(message.id().toString()));
            await().atMost(Duration.ofSeconds(60)).until(() -> rows(ds) == 0);
        }
        // built, not started: its builder and settings carry the (absent) tracing too
        CdcRelay.builder().jdbcUrl(url).user(user).password(Secret.of(password)).bootstrapServers(bootstrap)
                .slotName("no_otel_slot").build().close();
        System.out.println("NO-OTEL OK " + message.id());
    }

    private static long rows(PGSimpleDataSource ds) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM outbox_event")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
