package dev.outboxkit.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import sun.misc.Signal;

/**
 * SIGTERM and SIGINT ask the running command to stop; the command then stops gracefully and
 * returns normally, so the process exits 0 instead of the JVM's 143. Public for the dev-tools' {@code outbox dev}.
 */
public final class Shutdown {

    private final CountDownLatch requested = new CountDownLatch(1);

    public static Shutdown onSignals() {
        Shutdown s = new Shutdown();
        Signal.handle(new Signal("TERM"), sig -> s.request());
        Signal.handle(new Signal("INT"), sig -> s.request());
        return s;
    }

    void request() {
        requested.countDown();
    }

    boolean isRequested() {
        return requested.getCount() == 0;
    }

    public void await() throws InterruptedException {
        requested.await();
    }

    boolean await(long millis) throws InterruptedException {
        return requested.await(millis, TimeUnit.MILLISECONDS);
    }
}
