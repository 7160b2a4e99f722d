package dev.outboxkit.consumer.internal;

import dev.outboxkit.relay.Relay;

/**
 * Not API: public for {@code dev.outboxkit.consumer.DedupeConsumer}.
 *
 * <p>The consumer's two threads. The {@link PollThread} ({@link #run()}) owns the Kafka consumer:
 * it polls, decodes, hands a batch to the {@link Worker}, commits finished offsets and serves
 * rebalances. The worker owns the database connection: per batch one transaction, then it forwards
 * what must not be applied and marks the records finished. The poll thread reads and decodes the
 * next batches while the worker writes the current one: one waits in the hand-off queue, one more in
 * the poll thread.
 *
 * <p>Offsets: a record is finished when its transaction committed (or it was forwarded and Kafka
 * acknowledged); an offset is committed only when every record before it in its partition is
 * finished ({@link Ownership}).
 */
public final class ConsumerLoop implements Runnable {

    private final ConsumerSettings s;
    private final ConsumerMetrics metrics;
    private final Ownership ownership = new Ownership();
    private final LoopState state = new LoopState();
    private final PollThread pollThread;

    public ConsumerLoop(ConsumerSettings settings, ConsumerMetrics metrics) {
        this.s = settings;
        this.metrics = metrics;
        Forwarder forwarder = new Forwarder(settings.bootstrapServers(), settings.kafkaProperties(), settings.group(),
                settings.clientId(), settings.clock(), metrics.kafkaWrites);
        Worker worker = new Worker(settings, metrics, forwarder, ownership, state);
        this.pollThread = new PollThread(settings, metrics, forwarder, ownership, state, worker);
    }

    /** The poll thread's body: starts the worker, polls until stopped, then leaves the group. */
    @Override
    public void run() {
        pollThread.run();
    }

    /** Called by the owner just before it starts the thread: from now on the consumer counts as live. */
    public void starting() {
        state.running = true;
    }

    /** Asks both threads to finish the batch in flight, commit and leave the group; returns at once. */
    public void stop() {
        state.stopping = true;
        state.wakeUpConsumer();
    }

    /**
     * Live while the poll thread runs. Ready once it polled, while the worker has no trouble (the database) and Kafka
     * accepts the consumer's writes: not ready while an offset commit or a forwarded record has waited
     * {@link dev.outboxkit.runtime.KafkaWrites#SILENCE_LIMIT} with no acknowledgement from Kafka.
     */
    public Relay.Health health() {
        Throwable f = state.fatal;
        if (f != null) {
            return new Relay.Health(false, false, "group " + s.group() + ": stopped: " + ApplyFailures.describe(f));
        }
        if (!state.running) {
            return new Relay.Health(false, false, "group " + s.group() + ": not running");
        }
        String t = state.trouble;
        String w = metrics.kafkaWrites.problem(); // offset commits or forwarded records Kafka does not acknowledge
        if (t != null || w != null) {
            return new Relay.Health(true, false, "group " + s.group() + ": " + (t == null ? w : w == null ? t : t + "; " + w));
        }
        if (!state.polled) {
            return new Relay.Health(true, false, "group " + s.group() + ": joining");
        }
        return new Relay.Health(true, true, "group " + s.group() + ": " + ownership.size() + " partition(s) assigned, lag "
                + metrics.lag.get() + ", applied " + (long) metrics.applied.count() + ", duplicates "
                + (long) metrics.duplicates.count() + ", dead-lettered " + (long) metrics.deadLettered.count());
    }
}
