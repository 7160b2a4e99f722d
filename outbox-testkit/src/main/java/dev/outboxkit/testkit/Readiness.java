package dev.outboxkit.testkit;

import static org.awaitility.Awaitility.await;

import dev.outboxkit.relay.Relay;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Waits for a relay's (or sidecar's) readiness to turn, within a deadline, and says how long it took: the readiness
 * tests' bounds (not ready within 10 s of a lost dependency, ready within 2 s of its return) are measured, not slept.
 */
public final class Readiness {

    private static final Duration POLL = Duration.ofMillis(50);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** The readiness bounds: not ready this soon after a dependency is lost… */
    public static final Duration NOT_READY_WITHIN = Duration.ofSeconds(10);
    /** …and ready again this soon after it returns. */
    public static final Duration READY_AGAIN_WITHIN = Duration.ofSeconds(2);

    /** What a test does to a dependency (stop a broker, cut a proxy) or to bring it back. */
    @FunctionalInterface
    public interface Action {
        void run() throws Exception;
    }

    /** How long readiness took to turn each way. */
    public record Outage(Duration notReady, Duration readyAgain) {
        @Override
        public String toString() {
            return "not ready after " + notReady.toMillis() + " ms, ready again after " + readyAgain.toMillis() + " ms";
        }
    }

    /**
     * A relay's {@code start()} running on another thread while a dependency is away, caught waiting: {@code health}
     * is the relay's health read once the wait was seen (not ready, live, naming the address it tries);
     * {@code start} completes when {@code start()} returns or fails.
     */
    public record WaitingStart(Relay relay, CompletableFuture<Void> start, Relay.Health health) {

        /**
         * Brings the dependency back ({@code restore}, e.g. {@code proxy::heal}), then waits for {@code start()} to
         * return within {@code startWithin} and for readiness within {@code readyWithin}.
         *
         * @throws ExecutionException when {@code start()} failed after the dependency came back
         * @throws TimeoutException   when it did not return within {@code startWithin}
         * @throws AssertionError     when the relay was not ready within {@code readyWithin} of its start
         */
        public Restored afterRestore(Action restore, Duration startWithin, Duration readyWithin) throws Exception {
            long restored = System.nanoTime();
            restore.run();
            start.get(startWithin.toNanos(), TimeUnit.NANOSECONDS);
            Duration started = Duration.ofNanos(System.nanoTime() - restored);
            return new Restored(started, untilReady(relay::health, readyWithin));
        }
    }

    /**
     * How a start that waited went on once its dependency came back: {@code started}, from the restore until
     * {@code start()} returned; {@code ready}, from then until the relay was ready.
     */
    public record Restored(Duration started, Duration ready) {
        @Override
        public String toString() {
            return "started " + started.toMillis() + " ms after it answered, ready " + ready.toMillis()
                    + " ms after the start returned";
        }
    }

    private Readiness() {
    }

    /**
     * Starts {@code relay} on another thread, for a dependency that is away at {@code address} (a proxy that refuses,
     * a server not yet up), waits within {@code atMost} until its health detail contains {@code waitingFor} (what the
     * relay says while it waits, e.g. {@code "does not answer yet (attempt "}), and checks how it waits: not ready,
     * still live, its detail naming {@code address}, its {@code start()} not returned. The relay's
     * {@code startTimeout} must be longer than the test's wait.
     *
     * <pre>{@code
     * TcpFaultProxy pg = TcpFaultProxy.start("pg", db.server().host(), db.server().port()).resetAndRefuse();
     * // ... a relay on db.jdbcUrlVia(pg.host(), pg.port()) with startTimeout(Duration.ofMinutes(2))
     * WaitingStart waiting = Readiness.startWaiting(relay, "does not answer yet (attempt ", pg.address(),
     *         Duration.ofSeconds(60));
     * Readiness.Restored back = waiting.afterRestore(pg::heal, Duration.ofSeconds(60), Duration.ofSeconds(60));
     * }</pre>
     *
     * @throws AssertionError when the relay waits not ready, not live, without naming {@code address}, or its start
     *                        already returned (the ConditionTimeoutException of Awaitility when it never says
     *                        {@code waitingFor})
     */
    public static WaitingStart startWaiting(Relay relay, String waitingFor, String address, Duration atMost) {
        CompletableFuture<Void> start = CompletableFuture.runAsync(relay::start);
        await("the start waits, not ready, saying for what").atMost(atMost)
                .until(() -> relay.health().detail().contains(waitingFor));
        Relay.Health waiting = relay.health();
        if (waiting.ready() || !waiting.live() || !waiting.detail().contains(address) || start.isDone()) {
            throw new AssertionError("a start waiting for " + address + " must be not ready and live, name the address "
                    + "and not have returned; got ready=" + waiting.ready() + ", live=" + waiting.live()
                    + ", start returned=" + start.isDone() + ": " + waiting.detail());
        }
        return new WaitingStart(relay, start, waiting);
    }

    /** Waits until {@code health} is not ready with {@code reason} in its detail; returns the time it took. */
    public static Duration untilNotReady(Supplier<Relay.Health> health, String reason, Duration atMost) {
        return until(health, false, reason, atMost);
    }

    /** Waits until {@code health} is ready; returns the time it took. */
    public static Duration untilReady(Supplier<Relay.Health> health, Duration atMost) {
        return until(health, true, "", atMost);
    }

    /**
     * From a ready {@code health}: {@code cut}, then not ready with {@code reason} within {@link #NOT_READY_WITHIN}
     * and still live; {@code restore}, then ready within {@link #READY_AGAIN_WITHIN}.
     */
    public static Outage outage(Supplier<Relay.Health> health, Action cut, String reason, Action restore) throws Exception {
        cut.run();
        Duration notReady = untilNotReady(health, reason, NOT_READY_WITHIN);
        Relay.Health down = health.get();
        if (!down.live()) {
            throw new AssertionError("a lost dependency must not make the process look dead: " + down.detail());
        }
        restore.run();
        return new Outage(notReady, untilReady(health, READY_AGAIN_WITHIN));
    }

    /**
     * A readiness endpoint ({@code /health/ready}, {@code /actuator/health/readiness}) read as a health: ready is
     * 200, the detail is the status and body. Liveness is not the endpoint's business, so it reads as live.
     */
    public static Relay.Health overHttp(String url) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Relay.Health(true, r.statusCode() == 200, r.statusCode() + " " + r.body());
        } catch (IOException e) {
            throw new UncheckedIOException("GET " + url + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading " + url, e);
        }
    }

    private static Duration until(Supplier<Relay.Health> health, boolean ready, String reason, Duration atMost) {
        long start = System.nanoTime();
        await().atMost(atMost).pollDelay(Duration.ZERO).pollInterval(POLL).untilAsserted(() -> {
            Relay.Health h = health.get();
            if (h.ready() != ready || !h.detail().contains(reason)) {
                throw new AssertionError("waiting for ready=" + ready + (reason.isEmpty() ? "" : " with \"" + reason + "\"")
                        + ", got ready=" + h.ready() + ": " + h.detail());
            }
        });
        return Duration.ofNanos(System.nanoTime() - start);
    }
}
