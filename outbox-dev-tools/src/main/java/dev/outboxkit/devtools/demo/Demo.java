package dev.outboxkit.devtools.demo;

import dev.outboxkit.devtools.demo.LedgerService.Committed;
import dev.outboxkit.devtools.demo.LedgerService.Reply;
import dev.outboxkit.testkit.History;
import dev.outboxkit.writer.RequestInProgressException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The demo's clients: each sends transfer requests with a fresh idempotency key at a fixed
 * pace, and misbehaves the way real clients do — it loses some responses (the server committed,
 * the client never heard) and retries them with the same key, and it double-sends some
 * requests at once. Every committed event goes into the {@link History}.
 */
final class Demo {

    /** Counters for the report. */
    static final class Tally {
        final AtomicLong requests = new AtomicLong();
        final AtomicLong transfers = new AtomicLong();
        final AtomicLong eventsWritten = new AtomicLong();
        final AtomicLong lostAcks = new AtomicLong();
        final AtomicLong retriesAbsorbed = new AtomicLong();
        final AtomicLong inProgressAnswers = new AtomicLong();
        final AtomicLong doubleSends = new AtomicLong();
    }

    private final LedgerService ledger;
    private final History history;
    private final Tally tally;
    private final int accounts;
    private final double lostAckRate;
    private final double doubleSendRate;

    Demo(LedgerService ledger, History history, Tally tally, int accounts, double lostAckRate, double doubleSendRate) {
        this.ledger = ledger;
        this.history = history;
        this.tally = tally;
        this.accounts = accounts;
        this.lostAckRate = lostAckRate;
        this.doubleSendRate = doubleSendRate;
    }

    /**
     * Runs {@code transfers} transfers from {@code clients} threads at {@code ratePerSecond} in
     * total; {@code halfway} runs once when half of them are done.
     */
    void run(int transfers, int clients, double ratePerSecond, long seed, Runnable halfway, PrintWriter out) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(clients + 1, r -> {
            Thread t = new Thread(r, "demo-client");
            t.setDaemon(true);
            return t;
        });
        AtomicLong next = new AtomicLong();
        long intervalNanos = (long) (1e9 * clients / ratePerSecond);
        List<Future<?>> futures = new ArrayList<>();
        Runnable halfwayOnce = new Runnable() {
            private boolean done;

            @Override
            public synchronized void run() {
                if (!done) {
                    done = true;
                    halfway.run();
                }
            }
        };
        for (int i = 0; i < clients; i++) {
            SplittableRandom random = new SplittableRandom(seed + i);
            futures.add(pool.submit(() -> {
                long due = System.nanoTime();
                long n;
                while ((n = next.getAndIncrement()) < transfers) {
                    if (n == transfers / 2) {
                        halfwayOnce.run();
                    }
                    due += intervalNanos;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    oneTransfer(random, pool);
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get();
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private void oneTransfer(SplittableRandom random, ExecutorService pool) throws Exception {
        int a = random.nextInt(accounts);
        int b = (a + 1 + random.nextInt(accounts - 1)) % accounts;
        String from = account(a);
        String to = account(b);
        long amount = 1 + random.nextInt(500);
        String key = UUID.randomUUID().toString();
        boolean doubleSend = random.nextDouble() < doubleSendRate;
        Future<Reply> twin = null;
        if (doubleSend) {
            tally.doubleSends.incrementAndGet();
            twin = pool.submit(() -> send(key, from, to, amount));
        }
        Reply first = send(key, from, to, amount);
        if (random.nextDouble() < lostAckRate) {
            // The server committed but the response never arrived: the client retries with the same key.
            tally.lostAcks.incrementAndGet();
            Reply retry = send(key, from, to, amount);
            if (retry.status() != first.status()) {
                throw new IllegalStateException("retry of " + key + " answered " + retry.status() + ", first " + first.status());
            }
        }
        if (twin != null) {
            twin.get();
        }
    }

    /** One HTTP-like request, retried while the key is in progress (409 with Retry-After). */
    private Reply send(String key, String from, String to, long amount) throws Exception {
        while (true) {
            tally.requests.incrementAndGet();
            try {
                Reply reply = ledger.transfer(key, from, to, amount);
                if (reply.replayed()) {
                    tally.retriesAbsorbed.incrementAndGet();
                } else {
                    tally.transfers.incrementAndGet();
                    for (Committed c : reply.committed()) {
                        history.committed(c.eventId(), c.account(), c.version());
                        tally.eventsWritten.incrementAndGet();
                    }
                }
                return reply;
            } catch (RequestInProgressException busy) {
                tally.inProgressAnswers.incrementAndGet();
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(Math.max(1, Math.min(50, busy.retryAfter().toMillis()))));
            }
        }
    }

    static String account(int i) {
        return String.format("acc-%04d", i + 1);
    }
}
