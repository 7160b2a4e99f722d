package dev.outboxkit.relay.cdc.internal;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.io.IOException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One run of Debezium's (async) embedded engine on a thread of its own, with its outcome as a future. */
final class EngineRunner implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EngineRunner.class);

    /** How the engine ended: {@code error} is null after a normal stop. */
    record Outcome(boolean success, String message, Throwable error) {
    }

    private final DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
    private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    private final Thread thread;
    private volatile boolean polling;
    /** The consumer ended the polling itself (StopEngineException): Debezium's engine then closes on its own. */
    private final BooleanSupplier pollingEnded;
    /** Completes with the outcome or with the session's wake-up (the session's thread only). */
    private CompletableFuture<Object> wakeable;

    EngineRunner(Properties properties, DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> handler,
                 FlushPolicy policy, String slotName, BooleanSupplier pollingEnded) {
        this.pollingEnded = pollingEnded;
        engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                .using(properties)
                .using(policy)
                .using(new DebeziumEngine.ConnectorCallback() {
                    @Override
                    public void pollingStarted() {
                        polling = true;
                    }

                    @Override
                    public void pollingStopped() {
                        polling = false;
                    }
                })
                .using((success, message, error) -> outcome.complete(new Outcome(success, message, error)))
                .notifying(handler)
                .build();
        thread = new Thread(engine, "outboxkit-cdc-engine-" + slotName);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean polling() {
        return polling && !outcome.isDone();
    }

    boolean done() {
        return outcome.isDone();
    }

    /**
     * The outcome, waiting at most {@code timeout} or until {@code wake} completes; null while still running. The
     * first call ties {@code wake} to this run once (a new tie per call would pile up on both futures until the end).
     */
    Outcome outcome(Duration timeout, CompletableFuture<?> wake) throws InterruptedException {
        if (wakeable == null) {
            wakeable = CompletableFuture.anyOf(outcome, wake);
        }
        try {
            wakeable.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // the outcome below says what happened
        }
        return outcome.isDone() ? outcome(Duration.ZERO) : null;
    }

    /** The outcome, waiting at most {@code timeout}; null while still running. */
    Outcome outcome(Duration timeout) throws InterruptedException {
        try {
            return outcome.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (ExecutionException e) {
            return new Outcome(false, e.getMessage(), e.getCause());
        }
    }

    /**
     * Ends the engine and waits for its thread. When the consumer ended the polling, Debezium's own thread closes the
     * engine with nothing interrupted, and this only waits; calling its close then would throw (already stopping).
     * Otherwise Debezium's close cancels the polling with an interrupt, wherever the thread is.
     */
    @Override
    public void close() {
        if (outcome.isDone()) {
            log.debug("Debezium's engine had already ended");
        } else if (pollingEnded.getAsBoolean()) {
            log.debug("Debezium's polling ended at the handler's request: waiting for its engine to close itself");
        } else {
            log.debug("closing Debezium's engine while it polls: its close interrupts the polling thread");
            try {
                engine.close();
            } catch (IOException | RuntimeException e) {
                log.warn("closing Debezium's engine failed: {}", e.toString());
            }
        }
        try {
            thread.join(60_000);
            if (thread.isAlive()) {
                log.warn("Debezium's engine thread did not end within 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
