package dev.outboxkit.testkit;

import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared PostgreSQL server and Kafka cluster of this JVM: started on first use, stopped when
 * the JVM exits, so a whole test suite pays for start-up once.
 *
 * <p>Selected by system property or environment variable (the property wins):
 * <table>
 *   <caption>test infrastructure</caption>
 *   <tr><th>property / variable</th><th>values</th></tr>
 *   <tr><td>{@code outboxkit.test.postgres} / {@code OUTBOXKIT_TEST_POSTGRES}</td>
 *       <td>{@code embedded} (default: PostgreSQL 17 from Maven), {@code local} (the machine's
 *       initdb/pg_ctl; {@code OUTBOXKIT_TEST_POSTGRES_BIN} names their folder),
 *       {@code external} ({@code OUTBOXKIT_TEST_POSTGRES_URL}, {@code _USER}, {@code _PASSWORD}),
 *       {@code testcontainers} ({@code OUTBOXKIT_TEST_POSTGRES_IMAGE}, default postgres:17)</td></tr>
 *   <tr><td>{@code outboxkit.test.kafka} / {@code OUTBOXKIT_TEST_KAFKA}</td>
 *       <td>{@code embedded} (default: one KRaft node in this JVM), {@code external}
 *       ({@code OUTBOXKIT_TEST_KAFKA_BOOTSTRAP}), {@code testcontainers}
 *       ({@code OUTBOXKIT_TEST_KAFKA_IMAGE}, default apache/kafka:4.1.0)</td></tr>
 * </table>
 */
public final class OutboxTestkit {

    private static final Logger log = LoggerFactory.getLogger(OutboxTestkit.class);
    private static volatile TestPostgres postgres;
    private static volatile TestKafka kafka;
    private static volatile TestPostgres machine;
    private static volatile SecureGround secureGround;

    private OutboxTestkit() {
    }

    /** The shared PostgreSQL server of this JVM. */
    public static TestPostgres postgres() {
        TestPostgres p = postgres;
        if (p == null) {
            synchronized (OutboxTestkit.class) {
                if (postgres == null) {
                    long start = System.nanoTime();
                    postgres = startPostgres(setting("outboxkit.test.postgres", "embedded"), false);
                    log.info("test PostgreSQL {} ready in {} ms", postgres.describe(), (System.nanoTime() - start) / 1_000_000);
                    Runtime.getRuntime().addShutdownHook(boundedStop(postgres::close, "outboxkit-test-postgres-stop"));
                }
                p = postgres;
            }
        }
        return p;
    }

    /**
     * A second PostgreSQL server of this JVM from the machine's own binaries ({@code pg_ctl} on the
     * PATH; PostgreSQL 15 on this machine kind), for tests that cover a second major version.
     * Started on first use, stopped when the JVM exits. Null when {@code pg_ctl} is not on the PATH.
     */
    public static TestPostgres machinePostgres() {
        boolean onPath = java.util.stream.Stream.of(System.getenv("PATH").split(":"))
                .anyMatch(dir -> java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, "pg_ctl")));
        if (!onPath) {
            return null;
        }
        synchronized (OutboxTestkit.class) {
            if (machine == null) {
                machine = startPostgres("local", false);
                Runtime.getRuntime().addShutdownHook(boundedStop(machine::close, "outboxkit-machine-postgres-stop"));
            }
            return machine;
        }
    }

    /** The shared Kafka cluster of this JVM. */
    public static TestKafka kafka() {
        TestKafka k = kafka;
        if (k == null) {
            synchronized (OutboxTestkit.class) {
                if (kafka == null) {
                    long start = System.nanoTime();
                    kafka = startKafka(setting("outboxkit.test.kafka", "embedded"));
                    log.info("test Kafka {} ready in {} ms", kafka.describe(), (System.nanoTime() - start) / 1_000_000);
                    Runtime.getRuntime().addShutdownHook(boundedStop(kafka::close, "outboxkit-test-kafka-stop"));
                }
                k = kafka;
            }
        }
        return k;
    }

    /**
     * The shared {@link SecureGround} of this JVM (no PLAIN users: make SCRAM users with
     * {@link SecureKafka#createScramUser}), started on first use, stopped when the JVM exits. Its start costs more than
     * most tests on it, so a module's test classes share one; give each principal, role and topic a name of its own.
     */
    public static SecureGround secureGround() {
        SecureGround g = secureGround;
        if (g == null) {
            synchronized (OutboxTestkit.class) {
                if (secureGround == null) {
                    long start = System.nanoTime();
                    secureGround = SecureGround.start(java.util.Map.of());
                    log.info("test secure ground ready in {} ms", (System.nanoTime() - start) / 1_000_000);
                    Runtime.getRuntime().addShutdownHook(boundedStop(secureGround::close, "outboxkit-test-secure-ground-stop"));
                }
                g = secureGround;
            }
        }
        return g;
    }

    /**
     * A PostgreSQL server of the given kind that the caller owns (and closes).
     *
     * @param durable fsync on (benchmarks, the demo) or off (tests)
     */
    public static TestPostgres startPostgres(String kind, boolean durable) {
        return switch (kind.toLowerCase(Locale.ROOT)) {
            case "embedded" -> new EmbeddedPostgres17(0, durable);
            case "local" -> LocalPostgres.machine(env("OUTBOXKIT_TEST_POSTGRES_BIN", null), 0, durable);
            case "external" -> new ExternalPostgres(env("OUTBOXKIT_TEST_POSTGRES_URL", null),
                    env("OUTBOXKIT_TEST_POSTGRES_USER", null), env("OUTBOXKIT_TEST_POSTGRES_PASSWORD", null));
            case "testcontainers" -> new ContainerPostgres(env("OUTBOXKIT_TEST_POSTGRES_IMAGE", "postgres:17"));
            default -> throw new IllegalArgumentException("outboxkit.test.postgres=" + kind
                    + " is not known; use embedded, local, external or testcontainers");
        };
    }

    /** Embedded PostgreSQL 17 on a given port (0: any free port), owned by the caller. */
    public static TestPostgres startEmbeddedPostgres(int port, boolean durable) {
        return new EmbeddedPostgres17(port, durable);
    }

    /** A Kafka cluster of the given kind that the caller owns (and closes). */
    public static TestKafka startKafka(String kind) {
        return switch (kind.toLowerCase(Locale.ROOT)) {
            case "embedded" -> new EmbeddedKafka(1);
            case "external" -> new ExternalKafka(env("OUTBOXKIT_TEST_KAFKA_BOOTSTRAP", null));
            case "testcontainers" -> new ContainerKafka(env("OUTBOXKIT_TEST_KAFKA_IMAGE", "apache/kafka:4.1.0"));
            default -> throw new IllegalArgumentException("outboxkit.test.kafka=" + kind
                    + " is not known; use embedded, external or testcontainers");
        };
    }

    static String setting(String property, String defaultValue) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            value = System.getenv(property.toUpperCase(Locale.ROOT).replace('.', '_'));
        }
        return value == null || value.isBlank() ? defaultValue : value.trim();
    }

    private static String env(String name, String defaultValue) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? defaultValue : value;
    }

    /** Longest a shared server may take to stop when the JVM exits. */
    static final long STOP_BUDGET_MILLIS = 15_000;

    /**
     * A shutdown hook that stops a shared server but never holds the JVM's exit for longer than
     * {@link #STOP_BUDGET_MILLIS}: a broker's controlled shutdown on a loaded machine can take
     * longer than the test runner waits for a fork to exit, and the runner then fails a build whose
     * tests all passed. What is not stopped in time dies with the JVM (PostgreSQL is stopped first).
     */
    static Thread boundedStop(Runnable stop, String name) {
        return new Thread(() -> {
            Thread worker = new Thread(() -> {
                try {
                    stop.run();
                } catch (RuntimeException e) {
                    log.warn("{}: {}", name, e.toString());
                }
            }, name + "-worker");
            worker.setDaemon(true);
            worker.start();
            try {
                worker.join(STOP_BUDGET_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, name);
    }
}
