package dev.outboxkit.devtools;

import dev.outboxkit.sql.Migrations;
import dev.outboxkit.testkit.EmbeddedKafka;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.util.ArrayList;
import java.util.List;

/**
 * PostgreSQL 17 (embedded, wal_level=logical, durable) and a KRaft Kafka broker in this JVM,
 * for {@code outbox dev} and {@code outbox demo}. Nothing to install; everything is removed on close.
 */
final class DevStack implements AutoCloseable {

    private final TestPostgres postgres;
    private final EmbeddedKafka kafka;
    private final List<TestDatabase> databases = new ArrayList<>();

    DevStack(int postgresPort) {
        postgres = OutboxTestkit.startEmbeddedPostgres(postgresPort, true);
        EmbeddedKafka k = null;
        try {
            k = new EmbeddedKafka(1);
        } finally {
            if (k == null) {
                postgres.close();
            }
        }
        kafka = k;
    }

    /** A new database with the outboxkit schema in {@code public}. */
    TestDatabase database(String name) {
        TestDatabase db = postgres.createDatabase(name);
        databases.add(db);
        Migrations.migrate(db.dataSource(), Migrations.DEFAULT_SCHEMA);
        return db;
    }

    TestPostgres postgres() {
        return postgres;
    }

    EmbeddedKafka kafka() {
        return kafka;
    }

    @Override
    public void close() {
        databases.forEach(TestDatabase::close);
        try {
            kafka.close();
        } finally {
            postgres.close();
        }
    }
}
