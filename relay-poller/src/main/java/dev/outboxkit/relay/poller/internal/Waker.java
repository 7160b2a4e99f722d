package dev.outboxkit.relay.poller.internal;

import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>Lets an idle claim loop sleep until its poll delay passes or someone says there is work. One per claim loop (a
 * wake is taken by one sleeper); {@link #all} wakes every loop.
 */
public final class Waker {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition woken = lock.newCondition();
    private final List<Waker> also;
    private boolean signalled;

    public Waker() {
        this.also = List.of();
    }

    private Waker(List<Waker> also) {
        this.also = List.copyOf(also);
    }

    /** A waker whose {@link #wake()} wakes each of {@code loops} (for lease gains and notifications). */
    public static Waker all(List<Waker> loops) {
        return new Waker(loops);
    }

    /** Sleeps up to {@code nanos}; returns early (true) when {@link #wake()} was called meanwhile or before. */
    public boolean sleep(long nanos) throws InterruptedException {
        lock.lock();
        try {
            long left = nanos;
            while (!signalled && left > 0) {
                left = woken.awaitNanos(left);
            }
            boolean was = signalled;
            signalled = false;
            return was;
        } finally {
            lock.unlock();
        }
    }

    public void wake() {
        for (Waker w : also) {
            w.wake();
        }
        lock.lock();
        try {
            signalled = true;
            woken.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
