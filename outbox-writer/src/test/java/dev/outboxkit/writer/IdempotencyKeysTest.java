package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.ManualClock;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.spi.IdempotencyEngine;
import dev.outboxkit.writer.spi.IdempotencyEngine.Ending;
import dev.outboxkit.writer.spi.RoundTrip;
import dev.outboxkit.writer.spi.WorkTransaction;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class IdempotencyKeysTest {

    private static final String BODY = "{\"from\": 1, \"to\": 2, \"amount\": 5}";
    private final AtomicInteger runs = new AtomicInteger();

    /** Each test gets a database of its own (a fresh one per parameter), with the effect table. */
    static void effectTable(TestDatabase db) throws SQLException {
        db.exec("CREATE TABLE effect (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), idem_key text NOT NULL, note text)");
    }

    /** The effect: one row, one outbox event, a 201 with the run number. */
    private TransactionWork<StoredResponse> work(String key) {
        return (c, tx) -> {
            int run = runs.incrementAndGet();
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO effect (idem_key, note) VALUES ('" + key + "', 'run " + run + "')");
            }
            tx.add(OutboxMessage.builder("transfer", key, "TransferMade").payloadJson("{\"run\": " + run + "}").build());
            return new StoredResponse(201, Map.of("Content-Type", "application/json", "Location", "/transfers/" + key),
                    ("{\"run\": " + run + "}").getBytes(StandardCharsets.UTF_8));
        };
    }

    private static long effects(TestDatabase db, String key) throws SQLException {
        return db.count("SELECT count(*) FROM effect WHERE idem_key = '" + key + "'");
    }

    private static long events(TestDatabase db, String key) throws SQLException {
        return db.count("SELECT count(*) FROM outbox_event WHERE aggregate_id = '" + key + "'");
    }

    @Test
    void fiftyThreadsRaceOneKeyAndTheWorkRunsOnce(TestDatabase db) throws Exception {
        effectTable(db);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IdempotencyKeys keys = IdempotencyKeys.builder().meterRegistry(registry).build();
        try (HikariDataSource pool = db.newPool(50)) {
            for (int wave = 0; wave < 2; wave++) {
                CountDownLatch start = new CountDownLatch(1);
                ExecutorService threads = Executors.newFixedThreadPool(50);
                List<Future<Object>> outcomes = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    outcomes.add(threads.submit((Callable<Object>) () -> {
                        start.await();
                        try {
                            return keys.execute(pool, "transfers", "race-1", BODY, work("race-1"));
                        } catch (RequestInProgressException e) {
                            return e;
                        }
                    }));
                }
                start.countDown();
                List<IdempotentResult> results = new ArrayList<>();
                int inProgress = 0;
                for (Future<Object> f : outcomes) {
                    Object o = f.get(120, TimeUnit.SECONDS);
                    if (o instanceof IdempotentResult r) {
                        results.add(r);
                    } else {
                        inProgress++;
                        assertThat(((RequestInProgressException) o).retryAfter()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(30));
                    }
                }
                threads.shutdown();
                long executed = results.stream().filter(r -> !r.replayed()).count();
                assertThat(executed).as("wave %d: executions", wave).isEqualTo(wave == 0 ? 1 : 0);
                assertThat(results.size() + inProgress).isEqualTo(50);
                assertThat(results).allSatisfy(r -> assertThat(r.response().bodyAsString()).isEqualTo("{\"run\": 1}"));
                if (wave == 1) {
                    assertThat(inProgress).as("after completion everyone gets the replay").isZero();
                }
            }
        }
        assertThat(runs.get()).isEqualTo(1);
        assertThat(effects(db, "race-1")).isEqualTo(1);
        assertThat(events(db, "race-1")).isEqualTo(1);
        assertThat(registry.get("outbox.idempotency.requests").tag("outcome", "executed").counter().count()).isEqualTo(1);
    }

    /** The engine under the adapters, on a transaction of the caller's: claim, release, fence, complete, replay. */
    @Test
    void theEngineClaimsReleasesFencesAndCompletesInTheCallersTransaction(TestDatabase db) throws Exception {
        IdempotencyEngine engine = IdempotencyKeys.builder().build().unwrap(IdempotencyEngine.class);
        byte[] hash = IdempotencyKeys.requestHash(BODY);
        IdempotencyEngine.Claim claim = engine.claim(db.dataSource(), "steps", "s-1", hash);
        assertThat(claim.attempt()).isEqualTo(1);
        assertThat(claim.held()).isTrue();
        assertThatThrownBy(() -> engine.claim(db.dataSource(), "steps", "s-1", hash)).isInstanceOf(RequestInProgressException.class);
        // an outcome that is not final: the work rolls back and the claim is released
        try (Connection c = db.connect()) {
            assertThat(engine.run(claim, new PlainTransaction(c), Optional::empty).ending()).isEqualTo(Ending.RELEASED);
        }
        IdempotencyEngine.Claim second = engine.claim(db.dataSource(), "steps", "s-1", hash);
        assertThat(second.attempt()).as("released: the retry takes the key at once").isEqualTo(2);
        try (Connection c = db.connect()) {
            assertThat(engine.run(claim, new PlainTransaction(c), () -> Optional.of(StoredResponse.of(201, "stale"))).ending())
                    .as("fenced by the attempt").isEqualTo(Ending.CLAIM_LOST);
        }
        try (Connection c = db.connect()) {
            assertThat(engine.run(second, new PlainTransaction(c), () -> Optional.of(StoredResponse.of(201, "second"))))
                    .isEqualTo(new IdempotencyEngine.Outcome(Ending.EXECUTED, StoredResponse.of(201, "second")));
        }
        IdempotencyEngine.Claim replay = engine.claim(db.dataSource(), "steps", "s-1", hash);
        assertThat(replay.held()).isFalse();
        assertThat(replay.replay().bodyAsString()).isEqualTo("second");
        try (Connection c = db.connect()) {
            assertThatThrownBy(() -> engine.run(replay, new PlainTransaction(c), () -> Optional.of(StoredResponse.of(200, "x"))))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replay");
        }
        assertThatThrownBy(() -> engine.claim(db.dataSource(), "steps", "s-1", new byte[3]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SHA-256");
    }

    /** The smallest {@link WorkTransaction}: a plain connection, the completion run just before COMMIT. */
    private record PlainTransaction(Connection c) implements WorkTransaction {
        PlainTransaction {
            try {
                c.setAutoCommit(false);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void commit(RoundTrip completion) throws SQLException {
            try {
                completion.execute(c);
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            }
        }

        @Override
        public void rollback(Throwable cause) {
            try {
                c.rollback();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public <T> T alone(KeyStatement<T> statement) throws SQLException {
            c.setAutoCommit(true);
            return statement.run(c);
        }
    }

    @Test
    void aReplayCarriesStatusHeadersAndBodyAndIgnoresJsonSpelling(TestDatabase db) throws Exception {
        effectTable(db);
        IdempotencyKeys keys = IdempotencyKeys.builder().build();
        IdempotentResult first = keys.execute(db.dataSource(), "transfers", "k-1", BODY, work("k-1"));
        assertThat(first.replayed()).isFalse();
        String sameRequestSpelledDifferently = "{\n  \"amount\" : 5.0,\"to\":2, \"from\": 1e0 }";
        IdempotentResult again = keys.execute(db.dataSource(), "transfers", "k-1", sameRequestSpelledDifferently, work("k-1"));
        assertThat(again.replayed()).isTrue();
        assertThat(again.response()).isEqualTo(first.response());
        assertThat(again.response().headers()).containsEntry("Location", "/transfers/k-1")
                .containsEntry("Content-Type", "application/json");
        // the same key in another scope is another key
        assertThat(keys.execute(db.dataSource(), "refunds", "k-1", BODY, work("k-1")).replayed()).isFalse();
        assertThat(runs.get()).isEqualTo(2);
    }

    @Test
    void theSameKeyWithAnotherRequestIsRefused(TestDatabase db) throws Exception {
        effectTable(db);
        IdempotencyKeys keys = IdempotencyKeys.builder().build();
        keys.execute(db.dataSource(), "transfers", "k-2", BODY, work("k-2"));
        assertThatThrownBy(() -> keys.execute(db.dataSource(), "transfers", "k-2", "{\"from\": 1, \"to\": 2, \"amount\": 500}",
                work("k-2")))
                .isInstanceOf(KeyReusedWithDifferentRequestException.class)
                .hasMessageContaining("idempotency key 'k-2' in scope 'transfers' was already used for a different request");
        assertThat(runs.get()).isEqualTo(1);
        assertThat(effects(db, "k-2")).isEqualTo(1);
    }

    @Test
    void aTransientFailureReleasesTheKeyAndTheRetryRuns(TestDatabase db) throws Exception {
        effectTable(db);
        IdempotencyKeys keys = IdempotencyKeys.builder().build();
        assertThatThrownBy(() -> keys.execute(db.dataSource(), "transfers", "k-3", BODY, (c, tx) -> {
            work("k-3").run(c, tx);
            throw new java.net.SocketTimeoutException("fraud check timed out");
        })).isInstanceOf(WorkFailedException.class).hasRootCauseInstanceOf(java.net.SocketTimeoutException.class)
                .hasMessageContaining("its claim was released so a retry can run");
        assertThat(effects(db, "k-3")).as("the failed attempt's effect rolled back").isZero();
        assertThat(events(db, "k-3")).isZero();
        // the retry runs at once: no waiting for the lease
        IdempotentResult retry = keys.execute(db.dataSource(), "transfers", "k-3", BODY, work("k-3"));
        assertThat(retry.replayed()).isFalse();
        assertThat(retry.response().bodyAsString()).isEqualTo("{\"run\": 2}");
        assertThat(effects(db, "k-3")).isEqualTo(1);
        assertThat(events(db, "k-3")).isEqualTo(1);
        assertThat(db.count("SELECT attempt FROM idempotency_key WHERE idem_key = 'k-3'")).isEqualTo(2);
        // a failing statement in the work is transient too, and rethrown as it is
        assertThatThrownBy(() -> keys.execute(db.dataSource(), "transfers", "k-3b", BODY, (c, tx) -> {
            try (Statement s = c.createStatement()) {
                s.execute("SELECT 1 / 0");
            }
            return StoredResponse.of(200, "unreachable");
        })).isInstanceOf(SQLException.class).hasMessageContaining("division by zero");
        assertThat(keys.execute(db.dataSource(), "transfers", "k-3b", BODY, (c, tx) -> StoredResponse.of(200, "ok")).replayed())
                .isFalse();
    }

    @Test
    void aTerminalFailureIsStoredAndReplayedWithoutItsEffect(TestDatabase db) throws Exception {
        effectTable(db);
        IdempotencyKeys keys = IdempotencyKeys.builder().build();
        StoredResponse insufficient = StoredResponse.json(402, "{\"error\": \"insufficient funds\"}");
        IdempotentResult first = keys.execute(db.dataSource(), "transfers", "k-4", BODY, (c, tx) -> {
            work("k-4").run(c, tx);
            throw new TerminalFailureException(insufficient);
        });
        assertThat(first.replayed()).isFalse();
        assertThat(first.response()).isEqualTo(insufficient);
        IdempotentResult retry = keys.execute(db.dataSource(), "transfers", "k-4", BODY, work("k-4"));
        assertThat(retry.replayed()).isTrue();
        assertThat(retry.response()).isEqualTo(insufficient);
        assertThat(runs.get()).isEqualTo(1);
        assertThat(effects(db, "k-4")).isZero();
        assertThat(events(db, "k-4")).isZero();
    }

    @Test
    void anExpiredLeaseIsTakenOverAndTheStaleHolderCannotCommit(TestDatabase db) throws Exception {
        effectTable(db);
        ManualClock clock = ManualClock.startingAt(Instant.now());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IdempotencyKeys keys = IdempotencyKeys.builder().clock(clock).meterRegistry(registry).build();
        CountDownLatch working = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        Future<IdempotentResult> stale = thread.submit(() -> keys.execute(db.dataSource(), "transfers", "k-5", BODY,
                (c, tx) -> {
                    StoredResponse r = work("k-5").run(c, tx);
                    working.countDown();
                    proceed.await();
                    return r;
                }));
        assertThat(working.await(60, TimeUnit.SECONDS)).isTrue();
        // while the lease runs, a retry is told to come back about as long as the holder has run, never after
        // the whole lease (issue 29): at once the shortest wait, later its running time, at the end the lease's rest
        assertThat(inProgressRetryAfter(db, keys, "k-5")).isEqualTo(IdempotencyKeys.DEFAULT_RETRY_AFTER);
        clock.advance(Duration.ofSeconds(8));
        assertThat(inProgressRetryAfter(db, keys, "k-5")).isEqualTo(Duration.ofSeconds(8));
        clock.advance(Duration.ofSeconds(18));
        assertThat(inProgressRetryAfter(db, keys, "k-5")).isEqualTo(Duration.ofSeconds(4));
        // the holder stalls past its lease: a retry takes the key over and completes
        clock.advance(IdempotencyKeys.DEFAULT_LEASE.minusSeconds(26).plusSeconds(1));
        IdempotentResult takeover = keys.execute(db.dataSource(), "transfers", "k-5", BODY, work("k-5"));
        assertThat(takeover.replayed()).isFalse();
        assertThat(takeover.response().bodyAsString()).isEqualTo("{\"run\": 2}");
        // the stale holder wakes up: its completion is fenced off, its effect rolls back, it gets the replay
        proceed.countDown();
        IdempotentResult staleResult = stale.get(60, TimeUnit.SECONDS);
        thread.shutdown();
        assertThat(staleResult.replayed()).isTrue();
        assertThat(staleResult.response().bodyAsString()).isEqualTo("{\"run\": 2}");
        assertThat(effects(db, "k-5")).isEqualTo(1);
        assertThat(events(db, "k-5")).isEqualTo(1);
        assertThat(db.strings("SELECT note FROM effect WHERE idem_key = 'k-5'")).containsExactly("run 2");
        assertThat(registry.get("outbox.idempotency.takeovers").counter().count()).isEqualTo(1);
        assertThat(registry.get("outbox.idempotency.claims.lost").counter().count()).isEqualTo(1);
    }

    @Test
    void aCrashedHolderIsRecoveredOnceItsLeaseExpires(TestDatabase db) throws Exception {
        effectTable(db);
        try (JavaProcess holder = JavaProcess.start("crashing-holder", CrashingHolder.class,
                List.of(db.jdbcUrl(), db.user(), db.password(), "transfers", "k-6"), List.of(), Map.of())) {
            assertThat(holder.awaitOutput("WORKING", Duration.ofSeconds(90))).as(holder.output()).isTrue();
            holder.kill9();
        }
        IdempotencyKeys now = IdempotencyKeys.builder().build();
        assertThatThrownBy(() -> now.execute(db.dataSource(), "transfers", "k-6", "{\"amount\": 5}", work("k-6")))
                .isInstanceOf(RequestInProgressException.class);
        ManualClock later = ManualClock.startingAt(Instant.now());
        later.advance(IdempotencyKeys.DEFAULT_LEASE.plusSeconds(1));
        IdempotentResult recovered = IdempotencyKeys.builder().clock(later).build()
                .execute(db.dataSource(), "transfers", "k-6", "{\"amount\": 5}", work("k-6"));
        assertThat(recovered.replayed()).isFalse();
        assertThat(db.strings("SELECT note FROM effect WHERE idem_key = 'k-6'")).containsExactly("run 1");
        assertThat(db.count("SELECT attempt FROM idempotency_key WHERE idem_key = 'k-6'")).isEqualTo(2);
    }

    @Test
    void aLostCommitReplyIsRecoveredByRetryingWithTheSameKey(TestDatabase db) throws Exception {
        effectTable(db);
        ManualClock clock = ManualClock.startingAt(Instant.now());
        IdempotencyKeys keys = IdempotencyKeys.builder().clock(clock).build();
        WireTap tap = new WireTap();
        // committed, reply lost: the retry replays
        try (Connection c = tap.connect(db)) {
            tap.cutAt("COMMIT", WireTap.Fault.SEND_THEN_CUT);
            assertThatThrownBy(() -> keys.execute(TestSupport.singleConnection(c), "transfers", "k-7", BODY, work("k-7")))
                    .isInstanceOf(CommitOutcomeUnknownException.class).hasMessageContaining("Retry with the same key");
        }
        IdempotentResult replay = keys.execute(db.dataSource(), "transfers", "k-7", BODY, work("k-7"));
        assertThat(replay.replayed()).isTrue();
        assertThat(replay.response().bodyAsString()).isEqualTo("{\"run\": 1}");
        // never committed: the retry waits for the lease, then runs
        try (Connection c = tap.connect(db)) {
            tap.cutAt("COMMIT", WireTap.Fault.CUT_BEFORE_SEND);
            assertThatThrownBy(() -> keys.execute(TestSupport.singleConnection(c), "transfers", "k-8", BODY, work("k-8")))
                    .isInstanceOf(CommitOutcomeUnknownException.class);
        }
        assertThatThrownBy(() -> keys.execute(db.dataSource(), "transfers", "k-8", BODY, work("k-8")))
                .isInstanceOf(RequestInProgressException.class);
        clock.advance(IdempotencyKeys.DEFAULT_LEASE.plusSeconds(1));
        IdempotentResult rerun = keys.execute(db.dataSource(), "transfers", "k-8", BODY, work("k-8"));
        assertThat(rerun.replayed()).isFalse();
        assertThat(effects(db, "k-7")).isEqualTo(1);
        assertThat(effects(db, "k-8")).isEqualTo(1);
        assertThat(events(db, "k-8")).isEqualTo(1);
    }

    @Test
    void effectEventsAndCompletionCommitInOneRoundTrip(TestDatabase db) throws Exception {
        effectTable(db);
        IdempotencyKeys keys = IdempotencyKeys.builder().build();
        WireTap tap = new WireTap();
        try (Connection c = tap.connect(db)) {
            DataSource ds = TestSupport.singleConnection(c);
            for (int i = 0; i < 7; i++) {
                String key = "rt-" + i;
                long before = tap.roundTrips();
                long[] workStart = new long[1];
                keys.execute(ds, "transfers", key, BODY, (conn, tx) -> {
                    workStart[0] = tap.roundTrips();
                    StoredResponse r = work(key).run(conn, tx); // one INSERT, one buffered event
                    tx.add(OutboxMessage.builder("transfer", key, "Second").payloadJson("{}").build());
                    return r;
                });
                // the first request also checks the key tables' grants and the writer's, once each
                assertThat(workStart[0] - before).as("claim").isEqualTo(i == 0 ? 3 : 1);
                assertThat(tap.roundTrips() - workStart[0]).as("effect + (events, completion, COMMIT)").isEqualTo(2);
                before = tap.roundTrips();
                assertThat(keys.execute(ds, "transfers", key, BODY, work(key)).replayed()).isTrue();
                assertThat(tap.roundTrips() - before).as("replay: claim attempt + lookup").isEqualTo(2);
            }
            assertThat(c.getAutoCommit()).as("autocommit restored").isTrue();
        }
    }

    @Test
    void purgeKeepsACompactRecordThatRecognisesLateRetries(TestDatabase db) throws Exception {
        effectTable(db);
        ManualClock clock = ManualClock.startingAt(Instant.now());
        IdempotencyKeys keys = IdempotencyKeys.builder().clock(clock).retention("quotes", Duration.ofHours(2)).build();
        DataSource ds = db.dataSource();
        StoredResponse created = keys.execute(ds, "transfers", "p-1", BODY, work("p-1")).response();
        keys.execute(ds, "quotes", "p-2", BODY, work("p-2"));
        keys.execute(ds, "transfers", "p-3", BODY, (c, tx) -> {
            throw new TerminalFailureException(StoredResponse.of(404, "no such account"));
        });
        clock.advance(Duration.ofHours(3));
        assertThat(keys.purgeExpired(ds)).as("only the 2 h scope is due").isEqualTo(1);
        clock.advance(Duration.ofHours(22));
        // a claim from an instance whose clock runs behind: old, but its lease is live
        db.exec("INSERT INTO idempotency_key (scope, idem_key, request_hash, state, locked_until, created_at) "
                + "VALUES ('transfers', 'p-live', '\\x00', 'in_progress', now() + interval '100 hours', now() - interval '100 hours')");
        assertThat(keys.purgeExpired(ds)).isEqualTo(2);
        assertThat(db.count("SELECT count(*) FROM idempotency_key")).as("only the live claim is left").isEqualTo(1);

        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT request_hash, outcome_hash FROM idempotency_key_tombstone WHERE idem_key = 'p-1'")) {
            rs.next();
            assertThat(rs.getBytes(1)).isEqualTo(IdempotencyKeys.requestHash(BODY));
            ByteArrayOutputStream outcome = new ByteArrayOutputStream();
            outcome.write("201\n{\"Location\": \"/transfers/p-1\", \"Content-Type\": \"application/json\"}\n"
                    .getBytes(StandardCharsets.UTF_8));
            outcome.write(created.body());
            assertThat(rs.getBytes(2)).isEqualTo(MessageDigest.getInstance("SHA-256").digest(outcome.toByteArray()));
        }
        assertThat(db.count("SELECT count(*) FROM idempotency_key_tombstone")).isEqualTo(3);
        // a late retry is recognised, not executed
        assertThatThrownBy(() -> keys.execute(ds, "transfers", "p-1", BODY, work("p-1")))
                .isInstanceOf(IdempotencyKeyExpiredException.class).hasMessageContaining("NOT executed again");
        assertThatThrownBy(() -> keys.execute(ds, "quotes", "p-2", BODY, work("p-2")))
                .isInstanceOf(IdempotencyKeyExpiredException.class);
        assertThatThrownBy(() -> keys.execute(ds, "transfers", "p-1", "{\"other\": true}", work("p-1")))
                .isInstanceOf(KeyReusedWithDifferentRequestException.class);
        assertThat(runs.get()).isEqualTo(2);

        // without tombstones a purged key is forgotten: a late retry would run again
        IdempotencyKeys forgetful = IdempotencyKeys.builder().clock(clock).keepTombstones(false).build();
        forgetful.execute(ds, "transfers", "p-4", BODY, work("p-4"));
        clock.advance(Duration.ofHours(25));
        assertThat(forgetful.purgeExpired(ds)).isEqualTo(1);
        assertThat(db.count("SELECT count(*) FROM idempotency_key_tombstone WHERE idem_key = 'p-4'")).isZero();
        assertThat(forgetful.execute(ds, "transfers", "p-4", BODY, work("p-4")).replayed()).isFalse();
    }

    @Test
    void keysAndScopesAreValidated(TestDatabase db) throws Exception {
        effectTable(db);
        IdempotencyKeys keys = IdempotencyKeys.builder().build();
        assertThatThrownBy(() -> keys.execute(db.dataSource(), "transfers", " ", BODY, work("x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("idempotency key must not be blank");
        assertThatThrownBy(() -> keys.execute(db.dataSource(), "transfers", "k".repeat(256), BODY, work("x")))
                .hasMessage("idempotency key is 256 characters long; at most 255 are allowed");
        assertThatThrownBy(() -> keys.execute(db.dataSource(), "", "k", BODY, work("x")))
                .hasMessageStartingWith("scope must not be blank");
        assertThatThrownBy(() -> keys.execute(db.dataSource(), "transfers", "k", "{not json", work("x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("request is not valid JSON");
        assertThat(runs.get()).isZero();
    }

    private Duration inProgressRetryAfter(TestDatabase db, IdempotencyKeys keys, String key) {
        Throwable e = org.assertj.core.api.Assertions.catchThrowable(() -> keys.execute(db.dataSource(), "transfers", key, BODY,
                work(key)));
        assertThat(e).isInstanceOf(RequestInProgressException.class);
        return ((RequestInProgressException) e).retryAfter();
    }
}
