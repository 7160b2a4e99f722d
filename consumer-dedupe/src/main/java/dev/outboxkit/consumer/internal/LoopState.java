package dev.outboxkit.consumer.internal;

import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/**
 * What the poll thread and the worker share besides {@link Ownership}: the hand-off queue, the stop
 * flag, and the facts {@link ConsumerLoop#health()} reads from other threads.
 */
final class LoopState {
    /** One batch waits here for the worker; one more waits in the poll thread. */
    final BlockingQueue<List<BatchEntry>> handoff = new ArrayBlockingQueue<>(1);

    volatile boolean stopping;
    volatile boolean running;
    volatile boolean polled;
    volatile String trouble;
    volatile Throwable fatal;

    private volatile KafkaConsumer<byte[], byte[]> consumerForWakeup;

    void consumerCreated(KafkaConsumer<byte[], byte[]> consumer) {
        consumerForWakeup = consumer;
    }

    /** Interrupts a poll in progress (from any thread), so the poll thread sees the stop flag or the failure. */
    void wakeUpConsumer() {
        KafkaConsumer<byte[], byte[]> c = consumerForWakeup;
        if (c != null) {
            c.wakeup();
        }
    }
}
