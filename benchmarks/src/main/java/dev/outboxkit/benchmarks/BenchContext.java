package dev.outboxkit.benchmarks;

import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a scenario run gets: the benchmark stack (a durable embedded PostgreSQL 17 with fsync
 * and synchronous commit on, fsync off in the smoke mode only, and an in-JVM Kafka broker, both started by the runner for this
 * benchmark run only), the sizes of the mode, the payload size of this run and a scratch folder.
 */
public final class BenchContext {

    private static final Logger log = LoggerFactory.getLogger(BenchContext.class);

    private final TestPostgres postgres;
    private final TestKafka kafka;
    private final Sizes sizes;
    private final int payloadBytes;
    private final int repeat;
    private final Path workDir;
    private final List<TestDatabase> databases = new ArrayList<>();

    BenchContext(TestPostgres postgres, TestKafka kafka, Sizes sizes, int payloadBytes, int repeat, Path workDir) {
        this.postgres = postgres;
        this.kafka = kafka;
        this.sizes = sizes;
        this.payloadBytes = payloadBytes;
        this.repeat = repeat;
        this.workDir = workDir;
    }

    /** The PostgreSQL server (superuser access through {@link TestPostgres#connectAdmin}). */
    public TestPostgres postgres() {
        return postgres;
    }

    /** The Kafka cluster: {@link TestKafka#bootstrapServers()}, {@link TestKafka#createTopic}. */
    public TestKafka kafka() {
        return kafka;
    }

    public Sizes sizes() {
        return sizes;
    }

    /** Payload size of this run's events in bytes (200 unless a payload-sensitive scenario runs at 1 KB). */
    public int payloadBytes() {
        return payloadBytes;
    }

    /** 1-based repeat number of this run. */
    public int repeat() {
        return repeat;
    }

    /** A scratch folder for this benchmark run (child logs, temporary files). */
    public Path workDir() {
        return workDir;
    }

    /**
     * Where this run's reports go ({@code latest.json} and its neighbours; the scratch folder {@link #workDir()} is
     * its {@code tmp/}): for a scenario's own files that belong beside the results.
     */
    public Path resultsDir() {
        return workDir.toAbsolutePath().getParent();
    }

    /** A fresh database with the outboxkit schema in {@code public}; dropped after this scenario run. */
    public TestDatabase newDatabase() {
        TestDatabase db = postgres.newDatabase();
        databases.add(db);
        return db;
    }

    /** A topic name no other run uses. */
    public String uniqueTopic(String prefix) {
        return TestKafka.uniqueTopic(prefix);
    }

    /** Drops the databases this run made. */
    void cleanUp() {
        for (TestDatabase db : databases) {
            try {
                postgres.drop(db);
            } catch (RuntimeException e) {
                log.warn("could not drop benchmark database {}: {}", db.name(), e.getMessage());
            }
        }
        databases.clear();
    }
}
