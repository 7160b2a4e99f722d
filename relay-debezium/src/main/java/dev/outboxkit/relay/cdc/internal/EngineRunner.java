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

    EngineRunner(Properties properties, DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> handler,
                 FlushPolicy policy, String slotName) {
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

    @Override
    public void close() {
        try {
            engine.close();
        } catch (IOException | RuntimeException e) {
            log.warn("closing Debezium's engine failed: {}", e.toString());
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
