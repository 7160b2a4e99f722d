package dev.outboxkit.relay.poller.internal;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** Lets the idle claim loop sleep until its poll delay passes or someone says there is work. */
/** Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}. */
public final class Waker {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition woken = lock.newCondition();
    private boolean signalled;

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
        lock.lock();
        try {
            signalled = true;
            woken.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
