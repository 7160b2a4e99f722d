package dev.outboxkit.ops.admin;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The timings in docs/evidence/console-queries-20261207.md (not a test: run by hand). Fills an embedded PostgreSQL 17
 * with 10 M unpublished outbox rows, 100 k dead letters and 10 M processed_event rows of four consumer groups, then
 * times every {@link OutboxAdmin} question the operator console asks: median and max of 7 runs after one warm-up.
 * Args: outbox rows (default 10000000), processed rows (default 10000000), output file.
 * <pre>
 * ./mvnw -B -o -q -pl outbox-ops -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
 *     -Dmdep.outputFile=target/test-classpath.txt
 * java -Xmx1g -cp outbox-ops/target/test-classes:outbox-ops/target/classes:$(cat outbox-ops/target/test-classpath.txt) \
 *     dev.outboxkit.ops.admin.MeasureConsoleQueries
 * </pre>
 * One reactor build compiles what the class needs and lists its class path, in which the repository's own modules are
 * their {@code target/classes} from that build (nothing installed; jars of them in {@code ~/.m2} would be stale) and
 * the libraries their jars in {@code ~/.m2}. Each module writes its list into its own {@code target}.
 */
public final class MeasureConsoleQueries {

    private static final int RUNS = 7;
    private static final UUID PENDING = UUID.fromString("00000000-0000-7000-8000-000000000001");
    private static final UUID APPLIED = UUID.fromString("00000000-0000-7000-8000-000000000002");
    private static final UUID PARKED = UUID.fromString("00000000-0000-7000-8000-000000000003");
    private static final UUID NOWHERE = UUID.fromString("00000000-0000-7000-8000-000000000004");

    private MeasureConsoleQueries() {
    }

    private interface Query {
        Object run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        long outboxRows = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        long processedRows = args.length > 1 ? Long.parseLong(args[1]) : 10_000_000L;
        Path out = Path.of(args.length > 2 ? args[2] : "docs/evidence/console-queries-20261207.md");
        String loadBefore = load();
        TestPostgres pg = OutboxTestkit.postgres();
        TestDatabase db = pg.newDatabase();
        DataSource ds = db.newPool(2);

        long t0 = System.nanoTime();
        long chunk = 1_000_000;
        for (long from = 1; from <= outboxRows; from += chunk) {
            long to = Math.min(outboxRows, from + chunk - 1);
            Sql.exec(ds, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, topic, created_at)"
                    + " SELECT gen_random_uuid(), (ARRAY['order', 'account', 'invoice'])[1 + g % 3], 'a-' || (g % 100000),"
                    + " 'Placed', '{\"n\": 1}', CASE WHEN g % 5 = 0 THEN 'orders.v2' END,"
                    + " now() - interval '14 hours' + g * interval '5 ms' FROM generate_series(" + from + ", " + to + ") g");
            System.out.printf("outbox_event %,d rows after %d s%n", to, (System.nanoTime() - t0) / 1_000_000_000L);
        }
        Sql.exec(ds, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES ('" + PENDING
                + "', 'order', 'a-42', 'Placed', '{}')");
        Sql.exec(ds, "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, error_class, error_message, attempts, parked_at, parked_by)"
                + " SELECT CASE WHEN g = 1 THEN '" + PARKED + "'::uuid ELSE gen_random_uuid() END, g, 'order', 'd-' || g, 'Placed',"
                + " '{}', '{}', now() - interval '2 days', CASE g % 3 WHEN 0 THEN"
                + " 'org.apache.kafka.common.errors.RecordTooLargeException' WHEN 1 THEN"
                + " 'org.apache.kafka.common.errors.InvalidTopicException' ELSE 'org.apache.kafka.common.errors.TimeoutException' END,"
                + " CASE g % 3 WHEN 0 THEN 'The message is ' || (1048576 + g) || ' bytes when serialized which is larger than 1048576'"
                + " WHEN 1 THEN 'Invalid topics: [orders-' || g || ']' ELSE 'Topic ''t-' || (g % 50) || ''' not present in"
                + " metadata after 60000 ms.' END, 5, now() - interval '1 day' + g * interval '100 ms', 'relay-a'"
                + " FROM generate_series(1, 100000) g");
        String[] groups = {"billing", "shipping", "search-index", "audit"};
        long perGroup = processedRows / groups.length;
        for (String g : groups) {
            Sql.exec(ds, "INSERT INTO processed_event (consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset)"
                    + " SELECT '" + g + "', gen_random_uuid(), now() - interval '1 day' + g * interval '5 ms', 'orders.v2',"
                    + " (g % 12)::int, g FROM generate_series(1, " + perGroup + ") g");
            System.out.printf("processed_event group %s after %d s%n", g, (System.nanoTime() - t0) / 1_000_000_000L);
        }
        Sql.exec(ds, "INSERT INTO processed_event (consumer_group, event_id, topic, kafka_partition, kafka_offset) VALUES"
                + " ('billing', '" + APPLIED + "', 'orders.v2', 3, 4711), ('shipping', '" + APPLIED + "', 'orders.v2', 3, 4711)");
        Sql.exec(ds, "INSERT INTO idempotency_key (scope, idem_key, request_hash, state, response_status, created_at, completed_at)"
                + " SELECT 'checkout', 'k-' || g, sha256(g::text::bytea), 'completed', 201, now() - g * interval '1 s', now()"
                + " FROM generate_series(1, 100000) g");
        Sql.exec(ds, "INSERT INTO outbox_relay_member (member_id, partitions, expires_at) VALUES ('relay-a', 16, now() + interval '1 day')");
        Sql.exec(ds, "INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at)"
                + " SELECT 'poll/' || p, 'relay-a', p + 1, now() + interval '1 day' FROM generate_series(0, 15) p");
        Sql.exec(ds, "VACUUM ANALYZE");
        long fillSeconds = (System.nanoTime() - t0) / 1_000_000_000L;
        System.out.printf("filled and analysed in %d s%n", fillSeconds);

        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(ds, "public").build();
        DeadLetterReason biggest = admin.deadLetterReasons(1).get(0);
        List<String[]> rows = new ArrayList<>();
        rows.add(time("status()", () -> describe(admin.status())));
        rows.add(time("traceEvent: pending in outbox_event", () -> describe(admin.traceEvent(PENDING))));
        rows.add(time("traceEvent: applied by two groups", () -> describe(admin.traceEvent(APPLIED))));
        rows.add(time("traceEvent: dead-lettered", () -> describe(admin.traceEvent(PARKED))));
        rows.add(time("traceEvent: found nowhere", () -> describe(admin.traceEvent(NOWHERE))));
        rows.add(time("deadLetterReasons(50)", () -> admin.deadLetterReasons(50).size() + " groups"));
        rows.add(time("deadLetters(withReason(largest group), 50)", () -> admin.deadLetters(DeadLetterFilter.all()
                .withReason(biggest.errorClass(), biggest.messagePattern()), 50, null).items().size() + " rows"));
        rows.add(time("idempotencyKey", () -> admin.idempotencyKey("checkout", "k-50000").map(IdempotencyKeyState::state)
                .orElse("absent")));
        rows.add(time("for comparison: the unbounded count(*) GROUP BY topic status() ran before", () -> {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT topic, aggregate_type, count(*), min(created_at) FROM outbox_event WHERE published_at IS NULL"
                            + " GROUP BY topic, aggregate_type")) {
                int n = 0;
                while (rs.next()) {
                    n++;
                }
                return n + " groups";
            }
        }));
        String plan;
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) WITH RECURSIVE g(name) AS ((SELECT consumer_group"
                        + " FROM processed_event ORDER BY consumer_group LIMIT 1) UNION ALL SELECT (SELECT consumer_group FROM"
                        + " processed_event WHERE consumer_group > g.name ORDER BY consumer_group LIMIT 1) FROM g WHERE g.name IS NOT NULL)"
                        + " SELECT p.* FROM g JOIN processed_event p ON p.consumer_group = g.name AND p.event_id = '" + APPLIED + "'")) {
            StringBuilder sb = new StringBuilder();
            while (rs.next()) {
                sb.append(rs.getString(1)).append('\n');
            }
            plan = sb.toString();
        }
        String loadAfter = load();
        StringBuilder md = new StringBuilder();
        md.append("# Operator console queries on 10 million rows (2026-12-07)\n\n")
                .append("`OutboxAdmin`'s questions timed on ").append(pg.describe()).append(" (PostgreSQL ")
                .append(pg.majorVersion()).append(", embedded, default settings), run at ").append(Instant.now())
                .append(", after `VACUUM ANALYZE`.\n\n")
                .append(String.format("- `outbox_event`: %,d unpublished rows (3 aggregate types, every fifth row with an explicit"
                        + " topic), no partial index (delete mode).%n", outboxRows + 1))
                .append("- `outbox_dead_letter`: 100,000 rows, three error classes whose messages carry numbers and quoted values.\n")
                .append(String.format("- `processed_event`: %,d rows in four consumer groups.%n", perGroup * groups.length + 2))
                .append("- `idempotency_key`: 100,000 rows; `outbox_relay_member`: one live instance with 16 partitions and their leases.\n")
                .append(String.format("- Filling and analysing took %d s.%n%n", fillSeconds))
                .append("Each row: one warm-up, then ").append(RUNS).append(" timed calls through `OutboxAdmin` (a pool of two"
                        + " connections; the first call of each operation checks its grants and is the warm-up).\n\n")
                .append("| Query | median ms | max ms | answer |\n|---|---:|---:|---|\n");
        for (String[] r : rows) {
            md.append("| ").append(r[0]).append(" | ").append(r[1]).append(" | ").append(r[2]).append(" | ").append(r[3]).append(" |\n");
        }
        md.append("\nMachine load (`/proc/loadavg`): before filling `").append(loadBefore).append("`, after the timings `")
                .append(loadAfter).append("` (2 cores, shared with other builds).\n\n")
                .append("Plan of the consumer-group probe in `traceEvent` (a skip scan: one index descent per group, then one"
                        + " primary-key probe per group):\n\n```\n").append(plan).append("```\n\n")
                .append("Reproduce (from the repository root):\n\n```sh\n")
                .append("./mvnw -B -o -q -pl outbox-ops -am test-compile -DskipTests\n")
                .append("./mvnw -B -o -q -pl outbox-ops dependency:build-classpath -Dmdep.outputFile=/tmp/ops.cp -Dmdep.includeScope=test\n")
                .append("java -Xmx1g -cp sql/target/classes:outbox-core/target/classes:outbox-runtime/target/classes:outbox-testkit/target/classes:outbox-ops/target/test-classes:outbox-ops/target/classes:$(cat /tmp/ops.cp) \\\n")
                .append("     dev.outboxkit.ops.admin.MeasureConsoleQueries\n```\n");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, md.toString());
        System.out.println(md);
        pg.drop(db);
        System.exit(0);
    }

    private static String[] time(String name, Query q) throws Exception {
        Object answer = q.run();
        long[] ms = new long[RUNS];
        double[] exact = new double[RUNS];
        for (int i = 0; i < RUNS; i++) {
            long t = System.nanoTime();
            answer = q.run();
            exact[i] = (System.nanoTime() - t) / 1e6;
        }
        Arrays.sort(exact);
        String median = String.format("%.1f", exact[RUNS / 2]);
        String max = String.format("%.1f", exact[RUNS - 1]);
        System.out.printf("%-60s median %s ms, max %s ms: %s%n", name, median, max, answer);
        return new String[] {name, median, max, String.valueOf(answer)};
    }

    private static String describe(Status s) {
        return String.format("backlog %,d (%s), %d topic groups, oldest %d s, %,d dead letters", s.backlog(),
                s.backlogExact() ? "exact" : "estimate", s.backlogByTopic().size(), s.oldestUnpublishedAge().toSeconds(),
                s.deadLetters());
    }

    private static String describe(EventTrace t) {
        return (t.inOutbox().isPresent() ? "in outbox (" + t.inOutbox().get().leaseKey() + " held by "
                + t.inOutbox().get().leaseHolder() + ") " : "")
                + (t.deadLetter().isPresent() ? "parked " : "")
                + (t.applications().isEmpty() ? "" : t.applications().size() + " groups applied it ")
                + (t.found() ? "" : "not found");
    }

    private static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (Exception e) {
            return "unknown (" + e + ")";
        }
    }
}
