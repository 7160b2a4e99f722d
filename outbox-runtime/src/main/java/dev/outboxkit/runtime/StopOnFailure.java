package dev.outboxkit.runtime;

import dev.outboxkit.relay.PublishFailure;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: a relay's producer that stops at its first failed acknowledgement.
 *
 * <p>Why: when the idempotent producer fails a batch for good (its {@code delivery.timeout.ms} expired, or any
 * other error that is not the record's own fault), it bumps its epoch and goes on with the batches queued behind
 * it, so a later record of the same partition (the same aggregate) is written while the earlier one is not. A
 * relay that then publishes the earlier record again publishes it after the later one: per-aggregate order (G3)
 * is broken. So the first failure closes the producer at once ({@code close(Duration.ZERO)}), from Kafka's own
 * I/O thread inside the callback, before that thread sends anything else: every record still queued fails
 * too, and the relay publishes them all again, in order, with a fresh producer ({@link #renew()}).
 *
 * <p>A refusal that is the record's own fault ({@link PublishFailure#POISON}: too large, invalid topic) does not
 * stop the producer: the record is parked and the others go on (G7), as before.
 *
 * <p>Every record sent through {@link #send} is counted in the relay's {@link KafkaWrites} until Kafka answers it,
 * for readiness ("Kafka accepts our writes now").
 */
public final class StopOnFailure implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StopOnFailure.class);

    private final Supplier<Producer<byte[], byte[]>> factory;
    private final String name;
    private final KafkaWrites writes;
    private volatile Producer<byte[], byte[]> current;
    /** What stopped {@link #current}; null while it runs. */
    private volatile Throwable stoppedBy;

    /** @param name for the log: which relay's producer */
    public StopOnFailure(Supplier<Producer<byte[], byte[]>> factory, String name) {
        this(factory, name, new KafkaWrites("records"));
    }

    /** @param writes where sends are counted until answered (the relay's, read by its readiness) */
    public StopOnFailure(Supplier<Producer<byte[], byte[]>> factory, String name, KafkaWrites writes) {
        this.factory = factory;
        this.name = name;
        this.writes = writes;
        this.current = factory.get();
    }

    /** The writes {@link #send} counts. */
    public KafkaWrites writes() {
        return writes;
    }

    /**
     * {@link TracedRecords#send} of {@code traced} with {@code sentWith}, its callback {@link #guard guarded}, the
     * record counted in {@link #writes()} until Kafka answers it (or {@code send} throws: never sent).
     */
    public Future<RecordMetadata> send(Producer<byte[], byte[]> sentWith, TracedRecords.Traced traced, boolean immediateToo,
                                       Callback inner) {
        KafkaWrites.Pending pending = writes.handedOver(traced.record().topic());
        Callback answered = guard(sentWith, immediateToo, (metadata, error) -> {
            pending.answered(error);
            if (inner != null) {
                inner.onCompletion(metadata, error);
            }
        });
        try {
            return TracedRecords.send(sentWith, traced, answered);
        } catch (RuntimeException e) {
            pending.abandoned();
            throw e;
        }
    }

    /** The producer in use (possibly stopped: see {@link #stoppedBy()}). */
    public Producer<byte[], byte[]> producer() {
        return current;
    }

    /** The failure that stopped the current producer, or null while it runs. */
    public Throwable stoppedBy() {
        return stoppedBy;
    }

    /**
     * Wraps a send's callback: the first failure that is not POISON stops the producer the record was sent
     * with, before {@code inner} runs (so whoever learns of the failure finds the producer stopped). Call it on
     * the thread that sends, right before {@code send}.
     *
     * @param immediateToo whether a failure reported at once, inside {@code send} on this thread (the record never
     *                     entered the producer: no metadata for its topic within {@code max.block.ms}), stops it
     *                     as well; a caller that itself holds back the aggregate's later records may pass false
     */
    public Callback guard(Producer<byte[], byte[]> sentWith, boolean immediateToo, Callback inner) {
        Thread sender = Thread.currentThread();
        return (metadata, error) -> {
            if (error != null && PublishFailures.outcome(error) != PublishFailure.POISON
                    && (immediateToo || Thread.currentThread() != sender)) {
                stop(sentWith, error);
            }
            if (inner != null) {
                inner.onCompletion(metadata, error);
            }
        };
    }

    /**
     * Whether {@code error} is only the consequence of a stop (the producer closed, or the record aborted with
     * it) rather than the record's own failure: such a failure is no attempt of the record's.
     */
    public boolean consequenceOfStop(Throwable error) {
        Throwable first = stoppedBy;
        return first != null && error != null && error != first;
    }

    private void stop(Producer<byte[], byte[]> p, Throwable error) {
        synchronized (this) {
            if (p != current || stoppedBy != null) {
                return; // an older producer, or one already stopped: its other records fail as a consequence
            }
            stoppedBy = error;
        }
        log.warn("{}: Kafka failed a record ({}); closing the producer at once so nothing queued behind it is "
                + "published before it; everything unacknowledged is published again, in order", name,
                PublishFailures.classify(error).describe());
        closeNow(p);
    }

    /**
     * Never under this object's lock: outside its I/O thread, {@code close} joins that thread, which may be waiting
     * for the lock in a callback ({@link #stop}).
     */
    private void closeNow(Producer<byte[], byte[]> p) {
        try {
            p.close(Duration.ZERO); // on the I/O thread Kafka neither waits nor joins itself
        } catch (RuntimeException e) {
            log.warn("{}: closing the producer failed: {}", name, e.toString());
        }
    }

    /**
     * A fresh producer when the current one was stopped, else the current one. Call it only where nothing sent
     * with the old producer is still awaited (at the start of a relay session, before the next claim).
     */
    public synchronized Producer<byte[], byte[]> renew() {
        if (stoppedBy != null) {
            current = factory.get();
            stoppedBy = null;
            log.info("{}: a new producer replaces the one stopped by a failed record", name);
        }
        return current;
    }

    /** Closes the current producer at once (its pending records fail) and starts a fresh one. */
    public Producer<byte[], byte[]> replace() {
        Producer<byte[], byte[]> old;
        Producer<byte[], byte[]> fresh = factory.get();
        synchronized (this) {
            old = current;
            current = fresh;
            stoppedBy = null;
        }
        closeNow(old);
        return fresh;
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(30));
    }

    public void close(Duration timeout) {
        Producer<byte[], byte[]> p;
        boolean stopped;
        synchronized (this) {
            p = current;
            stopped = stoppedBy != null;
        }
        p.close(stopped ? Duration.ZERO : timeout);
    }
}
