package dev.outboxkit.benchmarks.load;

import dev.outboxkit.benchmarks.LatencyProfile;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Offers load at a fixed rate, open loop: a scheduler thread hands event {@code n} to a writer
 * pool at its intended time {@code start + n / rate} and never waits for anything downstream.
 * A slow relay therefore cannot slow the generator down and hide its own latency (coordinated
 * omission); a slow database shows up as schedule lag, which the result reports. Latency is
 * commit→ack from a {@link LatencyTracker} fed by the targets (commit) and by an observer such
 * as {@link KafkaAckObserver} (ack).
 */
public final class OpenLoopDriver {

    private OpenLoopDriver() {
    }

    /** Tells the tracker that event {@code id}'s commit returned (or, for Kafka alone, that it was handed to the producer). */
    @FunctionalInterface
    public interface Commit {
        void done(UUID id);
    }

    /** Writes one event; each writer thread has its own target (its own connection). */
    public interface Target extends AutoCloseable {
        void send(long n, Commit commit) throws Exception;

        @Override
        default void close() throws Exception {
        }
    }

    @FunctionalInterface
    public interface TargetFactory {
        Target open() throws Exception;
    }

    /**
     * @param rate         offered events/s
     * @param scheduled    events offered (warm-up included)
     * @param committed    events whose commit returned
     * @param acked        committed events acknowledged within the ack timeout
     * @param lost         committed events never acknowledged within it
     * @param duplicates   extra acknowledgements (at-least-once redeliveries)
     * @param achievedRate committed events/s over the whole schedule
     * @param maxLagMs     worst delay between an event's intended time and its writer picking it up
     * @param micros       commit→ack of the measured (post-warm-up) events, microseconds
     */
    public record Result(int rate, long scheduled, long committed, long acked, long lost, long duplicates,
                         double achievedRate, double maxLagMs, Histogram micros) {

        public LatencyProfile profile(String system) {
            return LatencyProfile.of(system, rate, achievedRate, lost, micros);
        }
    }

    /**
     * Offers {@code rate} events/s for {@code warmup + window} through {@code writers} writer
     * threads, then waits up to {@code ackTimeout} for the last acknowledgements. Events of the
     * warm-up are acknowledged but not measured.
     */
    public static Result run(int rate, Duration warmup, Duration window, Duration ackTimeout, int writers,
                             TargetFactory factory, LatencyTracker tracker) throws Exception {
        return run(rate, warmup, window, ackTimeout, writers, factory, tracker, () -> { });
    }

    /**
     * The same; {@code scheduleDone} runs once the schedule's last event was handed to the writers, while they are
     * still alive (a CPU budget that reads threads by name sees them then, and not after they ended).
     */
    public static Result run(int rate, Duration warmup, Duration window, Duration ackTimeout, int writers,
                             TargetFactory factory, LatencyTracker tracker, Runnable scheduleDone) throws Exception {
        if (rate < 1) {
            throw new IllegalArgumentException("rate must be at least 1 event/s, got " + rate);
        }
        long warmupEvents = rate * warmup.toMillis() / 1000;
        long total = warmupEvents + rate * window.toMillis() / 1000;
        double periodNanos = 1e9 / rate;
        BlockingQueue<long[]> queue = new LinkedBlockingQueue<>();
        AtomicReference<Exception> failure = new AtomicReference<>();
        AtomicLong maxLagNanos = new AtomicLong();
        List<Thread> pool = new ArrayList<>();
        List<Target> targets = new ArrayList<>();
        try {
            for (int i = 0; i < writers; i++) {
                targets.add(factory.open());
            }
            for (Target target : targets) {
                Thread t = new Thread(() -> write(queue, target, warmupEvents, tracker, maxLagNanos, failure),
                        "open-loop-writer-" + pool.size());
                pool.add(t);
                t.start();
            }
            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
            for (long n = 0; n < total && failure.get() == null; n++) {
                long intended = start + (long) (n * periodNanos);
                long wait;
                while ((wait = intended - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                queue.add(new long[] {n, intended});
            }
            scheduleDone.run();
            for (int i = 0; i < writers; i++) {
                queue.add(new long[] {-1, 0});
            }
            for (Thread t : pool) {
                t.join();
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            if (failure.get() != null) {
                throw new IllegalStateException("the load generator's writer failed: " + failure.get().getMessage(),
                        failure.get());
            }
            long deadline = System.nanoTime() + ackTimeout.toNanos();
            while (tracker.pending() > 0 && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(10);
            }
            long committed = tracker.committedCount();
            return new Result(rate, total, committed, tracker.ackedCount(), tracker.pending(), tracker.duplicates(),
                    committed / elapsed, maxLagNanos.get() / 1e6, tracker.histogram());
        } finally {
            failure.compareAndSet(null, new IllegalStateException("stopped"));
            for (Thread t : pool) {
                t.interrupt();
                t.join(10_000);
            }
            for (Target target : targets) {
                target.close();
            }
        }
    }

    private static void write(BlockingQueue<long[]> queue, Target target, long warmupEvents, LatencyTracker tracker,
                              AtomicLong maxLagNanos, AtomicReference<Exception> failure) {
        try {
            while (true) {
                long[] task = queue.take();
                long n = task[0];
                if (n < 0) {
                    return;
                }
                maxLagNanos.accumulateAndGet(System.nanoTime() - task[1], Math::max);
                boolean measured = n >= warmupEvents;
                target.send(n, id -> tracker.committed(id, measured));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            failure.compareAndSet(null, e);
        }
    }
}
