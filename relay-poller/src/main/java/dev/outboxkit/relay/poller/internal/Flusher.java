package dev.outboxkit.relay.poller.internal;

import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;

/**
 * Makes the producer send at once what it holds, without the claim loop waiting for it. The
 * producer lingers (5 ms) to fill batches while a backlog drains; when the relay is caught up it
 * asks for a flush after each small batch, so a lone event does not wait for the linger. Runs on
 * its own thread because {@code flush()} blocks until the records are acknowledged.
 */
final class Flusher implements Runnable {

    private final Supplier<Producer<byte[], byte[]>> producer;
    private final Object lock = new Object();
    private boolean requested;
    private volatile boolean stopped;

    Flusher(Supplier<Producer<byte[], byte[]>> producer) {
        this.producer = producer;
    }

    void request() {
        synchronized (lock) {
            requested = true;
            lock.notifyAll();
        }
    }

    void stop() {
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
