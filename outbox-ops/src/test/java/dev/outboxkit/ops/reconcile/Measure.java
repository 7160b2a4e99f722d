package dev.outboxkit.ops.reconcile;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import javax.sql.DataSource;

/**
 * The numbers in docs/performance.md, "outbox-ops" (not a test: run by hand). Args: rows (default 1000000).
 * <pre>
 * ./mvnw -B -o -pl sql,outbox-ops test-compile
 * ./mvnw -B -o -q -pl outbox-ops dependency:build-classpath -Dmdep.outputFile=/tmp/ops.cp -Dmdep.includeScope=test
 * java -Xmx2g -cp sql/target/classes:outbox-ops/target/test-classes:outbox-ops/target/classes:$(cat /tmp/ops.cp) \
 *      dev.outboxkit.ops.reconcile.Measure 1000000
 * </pre>
 */
public final class Measure {

    private Measure() {
    }

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        TestPostgres pg = OutboxTestkit.postgres();
        TestDatabase producerDb = pg.newDatabase();
        TestDatabase consumerDb = pg.newDatabase();
        DataSource producer = producerDb.newPool(2);
        DataSource consumer = consumerDb.newPool(2);
        triggerCost(producer);
        Sql.exec(producer, "TRUNCATE outbox_event");
        Sql.exec(producer, "TRUNCATE outbox_intent");

        // reconcile: rows intents (created in the last hour) against rows effects in another database
        long t0 = System.nanoTime();
        Sql.exec(producer, "INSERT INTO outbox_intent (event_id, aggregate_type, aggregate_id, event_type, created_at, payload_hash)"
                + " SELECT gen_random_uuid(), 'order', 'o-' || g, 'OrderPlaced', now() - interval '1 hour' + g * interval '1 ms',"
                + " sha256(g::text::bytea) FROM generate_series(1, " + rows + ") g");
        Sql.exec(producer, "ANALYZE outbox_intent");
        System.out.printf("filled %d intents in %d ms%n", rows, (System.nanoTime() - t0) / 1_000_000);
        t0 = System.nanoTime();
        Sql.exec(consumer, "CREATE TABLE ids (event_id uuid, created_at timestamptz)");
        try (Connection p = producer.getConnection(); Connection c = consumer.getConnection();
             PreparedStatement sel = p.prepareStatement("SELECT array_agg(event_id), array_agg(created_at + interval '1 s') FROM outbox_intent");
             PreparedStatement ins = c.prepareStatement("INSERT INTO processed_event (consumer_group, event_id, processed_at)"
                     + " SELECT 'billing', i, t FROM unnest(?::uuid[], ?::timestamptz[]) AS u(i, t)")) {
            var rs = sel.executeQuery();
            rs.next();
            ins.setArray(1, rs.getArray(1));
            ins.setArray(2, rs.getArray(2));
            ins.executeUpdate();
        }
        Sql.exec(consumer, "ANALYZE processed_event");
        System.out.printf("filled %d effects in %d ms%n", rows, (System.nanoTime() - t0) / 1_000_000);
        for (int run = 1; run <= 2; run++) {
            Report r = Reconciler.builder().outboxDatabase(producer, "public")
                    .consumer(new ConsumerSource("svc", consumer, "public", List.of("billing")))
                    .lookback(Duration.ofHours(2)).build().run();
            System.out.printf("reconcile run %d: %d intents vs %d effects, two databases: %d ms, findings %s%n", run,
                    r.intents(), rows, r.took().toMillis(), r.counts());
        }

        // retention: DROP of a day partition vs DELETE of the same number of rows
        IntentLedger ledger = new IntentLedger(producer, "public");
        LocalDate day = LocalDate.now(ZoneOffset.UTC).minusDays(30);
        ledger.createPartitions(day, 2);
        for (int i = 0; i < 2; i++) {
            Sql.exec(producer, "INSERT INTO outbox_intent (event_id, aggregate_type, aggregate_id, event_type, created_at, payload_hash)"
                    + " SELECT gen_random_uuid(), 'order', 'o-' || g, 'OrderPlaced', '" + day.plusDays(i)
                    + "'::timestamptz + g * interval '50 ms', sha256(g::text::bytea) FROM generate_series(1, " + rows + ") g");
        }
        Sql.exec(producer, "VACUUM ANALYZE outbox_intent");
        String first = "outbox_intent_p" + day.toString().replace("-", "");
        String second = "outbox_intent_p" + day.plusDays(1).toString().replace("-", "");
        t0 = System.nanoTime();
        Sql.exec(producer, "DELETE FROM " + second);
        long deleteMs = (System.nanoTime() - t0) / 1_000_000;
        t0 = System.nanoTime();
        Sql.exec(producer, "DROP TABLE " + first);
        long dropMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("retention of %d intents: DELETE %d ms (plus a VACUUM later), DROP partition %d ms%n", rows, deleteMs, dropMs);
        pg.drop(producerDb);
        pg.drop(consumerDb);
        System.exit(0);
    }

    /** Insert throughput into outbox_event with and without the ledger trigger, batched and one row per transaction. */
    private static void triggerCost(DataSource ds) throws Exception {
        IntentLedger ledger = new IntentLedger(ds, "public");
        for (int round = 0; round < 2; round++) {
            for (boolean on : new boolean[] {false, true}) {
                if (on) {
                    ledger.enable();
                } else {
                    ledger.disable();
                }
                Sql.exec(ds, "TRUNCATE outbox_event");
                System.out.printf("round %d trigger %-3s: batched %,.0f rows/s, single-row tx %,.0f tx/s%n", round,
                        on ? "on" : "off", batched(ds, 200, 500), single(ds, 5_000));
            }
        }
        ledger.enable();
    }

    private static final String PAYLOAD = "'{\"orderId\":\"' || g || '\",\"customer\":\"c-42\",\"amount\":\"129.90\","
            + "\"currency\":\"EUR\",\"lines\":[{\"sku\":\"A-1\",\"qty\":2},{\"sku\":\"B-7\",\"qty\":1}],\"note\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}'";

    private static double batched(DataSource ds, int statements, int perStatement) throws Exception {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                        + " SELECT gen_random_uuid(), 'order', 'o-' || g, 'OrderPlaced', (" + PAYLOAD + ")::jsonb"
                        + " FROM generate_series(1, ?) g")) {
            long t0 = System.nanoTime();
            for (int i = 0; i < statements; i++) {
                ps.setInt(1, perStatement);
                ps.executeUpdate();
            }
            return statements * (double) perStatement / ((System.nanoTime() - t0) / 1e9);
        }
    }

    private static double single(DataSource ds, int n) throws Exception {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                        + " SELECT gen_random_uuid(), 'order', 'o-' || g, 'OrderPlaced', (" + PAYLOAD + ")::jsonb"
                        + " FROM generate_series(?, ?) g")) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                ps.setInt(1, i);
                ps.setInt(2, i);
                ps.executeUpdate();
            }
            return n / ((System.nanoTime() - t0) / 1e9);
        }
    }
}
