package dev.outboxkit.runtime;

import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;

/**
 * Not API: shared by both relays.
 *
 * <p>Makes the producer send at once what it holds, without the relay's loop waiting for it. The
 * producer lingers (5 ms) to fill batches while a backlog drains; a relay asks for a flush after each
 * batch it appended, so a lone event does not wait for the linger. Runs on its own thread because
 * {@code flush()} blocks until the records are acknowledged.
 */
public final class Flusher implements Runnable {

    private final Supplier<Producer<byte[], byte[]>> producer;
    private final Object lock = new Object();
    private boolean requested;
    private volatile boolean stopped;

    public Flusher(Supplier<Producer<byte[], byte[]>> producer) {
        this.producer = producer;
    }

    /** Asks for a flush; returns at once (requests made while one runs fold into the next). */
    public void request() {
        synchronized (lock) {
            requested = true;
            lock.notifyAll();
        }
    }

    /** Ends the thread running this (after the flush in progress, if any). */
    public void stop() {
        stopped = true;
        request();
    }

    @Override
    public void run() {
        while (!stopped) {
            synchronized (lock) {
                while (!requested) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                requested = false;
            }
            if (stopped) {
                return;
            }
            try {
                producer.get().flush();
            } catch (RuntimeException e) {
                // the producer was replaced or closed meanwhile; the next request uses the current one
            }
        }
    }
}
