package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import dev.outboxkit.writer.OutboxWriter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * The publishing process of a crash run, alone in a child JVM that the benchmark kills with SIGKILL: an
 * application that writes events and publishes them, the same for every system. With {@code write=true} one
 * writer thread commits transactions as fast as it can, each a {@value #COMMITTED} row naming the event plus
 * the event itself; with {@code write=false} the process only recovers (publishes what is outstanding).
 * {@code system=poller|cdc}: outboxkit's writer in the transaction and its relay in the same process;
 * {@code system=modulith|namastack}: the Spring Modulith or namastack-outbox peer, its {@code @Transactional} service
 * doing both.
 * Arguments {@code key=value}: system, jdbcUrl, user, password, bootstrap, topic, slot (cdc), write, and optionally
 * instanceId (the relay's name in the lease table; the failover scenario starts several, each its own).
 * Prints {@code READY} once publishing (for the CDC relay: once its slot streams).
 */
public final class CrashPublisherMain {

    /** The table of committed events, created by the benchmark before the first start. */
    public static final String COMMITTED = "crash_committed";

    private CrashPublisherMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = PollerRelayMain.arguments(args);
        String system = a.get("system");
        String url = a.get("jdbcUrl");
        String user = a.get("user");
        String password = a.get("password");
        TopicRoute route = TopicRoute.of(a.get("topic"));
        Writer writer;
        AutoCloseable publisher;
        switch (system) {
            case "poller", "cdc" -> {
                String instanceId = a.get("instanceId");
                Relay relay = system.equals("poller")
                        ? instanceId == null
                                ? Relays.poller(url, user, password, a.get("bootstrap"), route, new SimpleMeterRegistry())
                                : Relays.pollerBuilder(url, user, password, a.get("bootstrap"), route,
                                        new SimpleMeterRegistry()).instanceId(instanceId).build()
                        // crash run: one instance id for both lives, the restarted process takes its lease back at once
                        : Relays.cdc(url, user, password, a.get("bootstrap"), route, a.get("slot"),
                                new SimpleMeterRegistry()).instanceId(instanceId == null ? "bench-crash-cdc" : instanceId)
                                .build();
                relay.start();
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (!relay.health().ready() && System.nanoTime() < deadline) {
                    TimeUnit.MILLISECONDS.sleep(20);
                }
                publisher = relay;
                writer = outboxWriter(url, user, password);
            }
            case "modulith", "namastack" -> {
                PeerApp peer = PeerApp.start(system, url, user, password, a.get("bootstrap"), a.get("topic"));
                if (peer instanceof NamastackPeer namastack && Boolean.parseBoolean(a.getOrDefault("write", "false"))) {
                    // the first life only: a restart cannot own the partitions before the killed instance is stale
                    namastack.awaitReady();
                }
                publisher = peer;
                writer = peer::publishRecorded;
            }
            default -> throw new IllegalArgumentException("system must be poller, cdc, modulith or namastack, got "
                    + system);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // when the JVM began its stop (SIGTERM), to set against the signal's instant in the benchmark's log
            LoggerFactory.getLogger(CrashPublisherMain.class).info("shutdown hook: closing the {} relay", system);
            try {
                publisher.close();
            } catch (Exception e) {
                System.err.println("closing " + system + ": " + e);
            }
        }));
        System.out.println("READY");
        if (Boolean.parseBoolean(a.getOrDefault("write", "false"))) {
            for (long n = 0; ; n++) {
                writer.write(EventIds.next(), SyntheticEvents.aggregateId(n), n, SyntheticEvents.payload(n, 200));
            }
        }
        Thread.currentThread().join(); // until SIGTERM or SIGKILL
    }

    /** One committed transaction: the business row and its event. */
    @FunctionalInterface
    private interface Writer {
        void write(UUID id, String aggregate, long n, String payload) throws Exception;
    }

    private static Writer outboxWriter(String url, String user, String password) throws Exception {
        OutboxWriter outbox = OutboxWriter.builder().build();
        Connection c = DriverManager.getConnection(url, user, password);
        c.setAutoCommit(false);
        PreparedStatement insert = c.prepareStatement(
                "INSERT INTO " + COMMITTED + " (event_id, aggregate_id, n) VALUES (?, ?, ?)");
        return (ignored, aggregate, n, payload) -> {
            OutboxTransaction tx = outbox.begin(c);
            UUID id = tx.add(OutboxMessage.builder(SyntheticEvents.AGGREGATE_TYPE, aggregate, SyntheticEvents.EVENT_TYPE)
                    .payloadJson(payload).build());
            insert.setObject(1, id);
            insert.setString(2, aggregate);
            insert.setLong(3, n);
            insert.executeUpdate();
            tx.commit();
        };
    }
}
