package dev.outboxkit.console;

import com.sun.net.httpserver.HttpServer;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;

/**
 * How long each console page takes over HTTP (not a test: run by hand): an embedded PostgreSQL 17 with N unpublished
 * outbox rows (default 1,000,000), 30,000 dead letters of three reasons and N rows of four consumer groups
 * in {@code processed_event}, three relay members and their reports, 100,000 journal entries, the console (payloads shown) on the JDK
 * HTTP server; median
 * and max of 21 requests per page after 3 warm-ups.
 * <pre>
 * ./mvnw -B -o -q -pl outbox-console -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
 *     -Dmdep.outputFile=target/test-classpath.txt
 * java -cp outbox-console/target/test-classes:outbox-console/target/classes:$(cat outbox-console/target/test-classpath.txt) \
 *     dev.outboxkit.console.MeasureConsolePages
 * </pre>
 * One reactor build compiles what the class needs and lists its class path, in which the repository's own modules are
 * their {@code target/classes} from that build (nothing installed; jars of them in {@code ~/.m2} would be stale) and
 * the libraries their jars in {@code ~/.m2}. Each module writes its list into its own {@code target}.
 */
public final class MeasureConsolePages {

    private MeasureConsolePages() {
    }

    public static void main(String[] args) throws Exception {
        long rows = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
        System.setProperty("sun.net.httpserver.nodelay", "true"); // as the sidecar serves it (see Console#httpHandler)
        TestPostgres pg = OutboxTestkit.postgres();
        TestDatabase db = pg.newDatabase();
        DataSource ds = db.newPool(4);
        Sql.exec(ds, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at)"
                + " SELECT gen_random_uuid(), (ARRAY['order', 'account', 'invoice'])[1 + g % 3], 'a-' || (g % 100000), 'Placed',"
                + " '{\"n\": 1}', now() - interval '2 hours' + g * interval '1 ms' FROM generate_series(1, " + rows + ") g");
        Sql.exec(ds, "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, error_class, error_message, attempts, parked_at, parked_by)"
                + " SELECT gen_random_uuid(), g, 'order', 'd-' || g, 'Placed', '{}', '{}', now() - interval '2 days',"
                + " CASE g % 3 WHEN 0 THEN 'org.apache.kafka.common.errors.RecordTooLargeException' WHEN 1 THEN"
                + " 'org.apache.kafka.common.errors.InvalidTopicException' ELSE 'org.apache.kafka.common.errors.TimeoutException' END,"
                + " 'record ' || g || ' refused', 5, now() - interval '1 day' + g * interval '100 ms', 'relay-a'"
                + " FROM generate_series(" + (rows + 1) + ", " + (rows + 30_000) + ") g");
        Sql.exec(ds, "INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at) SELECT 'poll/' || g, 'relay-' || (g % 2), g,"
                + " now() + interval '1 minute' FROM generate_series(0, 15) g");
        // the consumers' inbox in the same database, as large as the outbox: four groups
        Sql.exec(ds, "INSERT INTO processed_event (consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset)"
                + " SELECT 'group-' || (g % 4), gen_random_uuid(), now() - interval '1 hour', 'outbox.event.order', (g % 12)::int, g"
                + " FROM generate_series(1, " + rows + ") g");
        String anEvent;
        try (java.sql.Connection c = ds.getConnection()) {
            anEvent = Sql.strings(c, "SELECT id::text FROM outbox_event ORDER BY seq DESC LIMIT 1").get(0);
        }
        // the looked-up event was also applied by two groups, so the event page reads the inbox too
        Sql.exec(ds, "INSERT INTO processed_event (consumer_group, event_id, topic, kafka_partition, kafka_offset) SELECT 'group-' || g, '"
                + anEvent + "'::uuid, 'outbox.event.order', 3, 42 FROM generate_series(0, 1) g");
        // the polling relay's members and their reports, and a journal of 100,000 entries (far more than 90 days of hourly rounds):
        // reconciliations with 20 findings each, retention rounds, retries and discards
        Sql.exec(ds, "INSERT INTO outbox_relay_member (member_id, partitions, expires_at) SELECT 'relay-' || g, 16,"
                + " now() + interval '1 minute' FROM generate_series(0, 2) g");
        Sql.exec(ds, "INSERT INTO outbox_relay_report (instance_id, relay, host, started_at, reported_at, expires_at, ready,"
                + " published, last_published_at) SELECT 'relay-' || g, 'poll', 'node-' || g, now() - interval '1 hour', now(),"
                + " now() + interval '1 hour', true, 1000 * g, now() FROM generate_series(0, 2) g");
        Sql.exec(ds, "INSERT INTO outbox_ops_journal (kind, started_at, finished_at, actor, outcome, summary, detail)"
                + " SELECT (ARRAY['reconcile', 'retention', 'dead-letter-retry', 'dead-letter-discard'])[1 + g % 4],"
                + " now() - g * interval '1 minute', now() - g * interval '1 minute' + interval '2 seconds', 'outbox-cli ops@host',"
                + " 'success', 'entry ' || g, jsonb_build_object('counts', jsonb_build_object('LOST', 1, 'PHANTOM', 19),"
                + " 'findings', (SELECT jsonb_agg(jsonb_build_object('kind', 'PHANTOM', 'eventId', gen_random_uuid(),"
                + " 'detail', 'applied, no intent with this id in the ledger')) FROM generate_series(1, 20)), 'interval', 'PT1H')"
                + " FROM generate_series(1, 100000) g");
        Sql.exec(ds, "ANALYZE");

        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(ds, "public").build();
        // payloads shown: the event page reads the payload too (the most it does)
        try (Console console = Console.builder().admin(admin).showPayloads(true).build()) {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
            ExecutorService threads = Executors.newFixedThreadPool(4);
            server.setExecutor(threads);
            server.createContext(console.basePath(), console.httpHandler());
            server.start();
            String base = "http://127.0.0.1:" + server.getAddress().getPort() + "/console";
            HttpClient http = HttpClient.newHttpClient();
            StringBuilder report = new StringBuilder("console pages over HTTP, " + String.format("%,d", rows)
                    + " unpublished rows, 30,000 dead letters, " + String.format("%,d", rows) + " inbox rows; load before: " + Files.readString(Path.of("/proc/loadavg")).trim() + "\n");
            for (String page : List.of("/", "/fragments/overview", "/dead-letters",
                    "/fragments/reason-rows?errorClass=org.apache.kafka.common.errors.TimeoutException&message=record+%7B%7D+refused",
                    "/events?id=" + anEvent,
                    "/idempotency?scope=s&key=k", "/runs", "/assets/htmx.min.js")) {
                List<Long> micros = new ArrayList<>();
                for (int i = 0; i < 24; i++) {
                    long t = System.nanoTime();
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + page)).timeout(Duration.ofSeconds(60)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() != 200) {
                        throw new IllegalStateException(page + " answered " + r.statusCode() + ": " + r.body());
                    }
                    if (i >= 3) {
                        micros.add((System.nanoTime() - t) / 1000);
                    }
                }
                Collections.sort(micros);
                report.append(String.format("%-32s median %7.1f ms  max %7.1f ms%n", page.length() > 32 ? page.substring(0, 32) : page,
                        micros.get(micros.size() / 2) / 1000.0, micros.get(micros.size() - 1) / 1000.0));
            }
            report.append("load after: ").append(Files.readString(Path.of("/proc/loadavg")).trim()).append('\n');
            System.out.print(report);
            server.stop(0);
            threads.shutdown();
        }
        db.close();
    }
}
