package dev.outboxkit.ops.reconcile;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What the schema version 7 triggers cost the polling relay's drain (docs/performance.md, "outbox-ops"; not a
 * test: run by hand). A backlog of {@code rows} outbox rows is drained by a fresh PollingRelay with
 * the intent ledger off and on, in DELETE and MARK mode, alternating, {@code rounds} times; the
 * first drain warms up and is not reported. Before that, the insert rate of the backlog statement
 * with the ledger off, with V6's insert trigger body and with V7's. Args: rows (default 200000), rounds (default 3).
 * <pre>
 * ./mvnw -B -o -q -pl outbox-ops -am test-compile
 * ./mvnw -B -o -q -pl outbox-ops dependency:build-classpath -Dmdep.outputFile=/tmp/ops.cp -Dmdep.includeScope=test
 * java -Xmx2g -cp sql/target/classes:outbox-ops/target/test-classes:outbox-ops/target/classes:$(cat /tmp/ops.cp) \
 *      dev.outboxkit.ops.reconcile.MeasureDrain 200000 3
 * </pre>
 */
public final class MeasureDrain {

    private MeasureDrain() {
    }

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        TestPostgres pg = OutboxTestkit.postgres();
        TestKafka kafka = OutboxTestkit.kafka();
        TestDatabase db = pg.newDatabase();
        DataSource ds = db.newPool(2);
        IntentLedger ledger = new IntentLedger(ds, "public");
        String prefix = TestKafka.uniqueTopic("drain");
        kafka.createTopic(prefix + ".order", 6);
        insertCost(ds, ledger, rows);
        // MARK mode needs the partial index a fresh schema leaves out (V9); deleting relays ignore it.
        try (java.sql.Connection c = ds.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE INDEX outbox_event_unpublished ON outbox_event (seq) WHERE published_at IS NULL");
        }
        drain(db, ds, ledger, kafka, prefix, AfterPublish.DELETE, false, rows); // warm-up
        Map<String, List<Double>> results = new java.util.LinkedHashMap<>();
        for (int round = 1; round <= rounds; round++) {
            for (AfterPublish mode : AfterPublish.values()) {
                for (boolean on : new boolean[] {false, true}) {
                    double rate = drain(db, ds, ledger, kafka, prefix, mode, on, rows);
                    String key = mode + " intents " + (on ? "on " : "off");
                    results.computeIfAbsent(key, k -> new ArrayList<>()).add(rate);
                    System.out.printf("round %d %-20s %,10.0f rows/s%n", round, key, rate);
                }
            }
        }
        System.out.println("summary (rows/s per round):");
        results.forEach((k, v) -> System.out.printf("  %-20s %s%n", k, v.stream().map(r -> String.format("%,.0f", r)).toList()));
        pg.drop(db);
        System.exit(0);
    }

    /** The V6 body of the insert trigger, without V7's ON CONFLICT clause, to compare the insert cost. */
    private static final String V6_RECORD = "CREATE OR REPLACE FUNCTION outbox_intent_record() RETURNS trigger LANGUAGE plpgsql"
            + " SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO outbox_intent (event_id, aggregate_type, aggregate_id,"
            + " event_type, created_at, published_at, payload_hash) SELECT id, aggregate_type, aggregate_id, event_type, created_at,"
            + " published_at, sha256(convert_to(payload::text, 'UTF8')) FROM inserted; RETURN NULL; END $$";

    /** Insert rate of the backlog statement: ledger off, V6 trigger body, V7 trigger body (ON CONFLICT … DO UPDATE). */
    private static void insertCost(DataSource ds, IntentLedger ledger, int rows) throws Exception {
        String v7;
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT pg_get_functiondef('outbox_intent_record()'::regprocedure)")) {
            rs.next();
            v7 = rs.getString(1);
        }
        for (int round = 1; round <= 2; round++) {
            for (String variant : List.of("off", "V6", "V7")) {
                Sql.exec(ds, "TRUNCATE outbox_event, outbox_intent");
                if (variant.equals("off")) {
                    ledger.disable();
                } else {
                    ledger.enable();
                    Sql.exec(ds, variant.equals("V6") ? V6_RECORD : v7);
                }
                long t0 = System.nanoTime();
                fill(ds, rows);
                System.out.printf("insert round %d ledger %-3s %,10.0f rows/s%n", round, variant,
                        rows / ((System.nanoTime() - t0) / 1e9));
            }
        }
        Sql.exec(ds, v7);
    }

    private static void fill(DataSource ds, int rows) throws Exception {
        Sql.exec(ds, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT gen_random_uuid(), 'order', 'o-' || (g % 1000), 'OrderPlaced',"
                + " jsonb_build_object('orderId', g, 'customer', 'c-42', 'amount', '129.90', 'note', repeat('x', 120))"
                + " FROM generate_series(1, " + rows + ") g");
    }

    private static double drain(TestDatabase db, DataSource ds, IntentLedger ledger, TestKafka kafka, String prefix,
                                AfterPublish mode, boolean intents, int rows) throws Exception {
        Sql.exec(ds, "TRUNCATE outbox_event, outbox_intent, outbox_dead_letter, outbox_relay_lease, outbox_relay_member");
        if (intents) {
            ledger.enable();
        } else {
            ledger.disable();
        }
        // the backlog, written with the ledger in the state it is measured in (the ledger rows must exist to be updated)
        fill(ds, rows);
        Sql.exec(ds, "VACUUM ANALYZE outbox_event");
        Sql.exec(ds, "VACUUM ANALYZE outbox_intent");
        String left = mode == AfterPublish.MARK
                ? "SELECT EXISTS (SELECT 1 FROM outbox_event WHERE published_at IS NULL)"
                : "SELECT EXISTS (SELECT 1 FROM outbox_event)";
        long t0;
        try (PollingRelay relay = PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(kafka.bootstrapServers())
                .route(TopicRoute.of(prefix + ".${aggregateType}"))
                .afterPublish(mode)
                .build()) {
            t0 = System.nanoTime();
            relay.start();
            while (query(ds, left)) {
                Thread.sleep(20);
            }
        }
        double rate = rows / ((System.nanoTime() - t0) / 1e9);
        if (intents) {
            long unrecorded = Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE published_at IS NULL");
            if (unrecorded != 0) {
                throw new IllegalStateException(unrecorded + " intents without published_at after the drain");
            }
        }
        return rate;
    }

    private static boolean query(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
