package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.relay.PublishFailure;
import dev.outboxkit.runtime.PublishFailures;
import dev.outboxkit.runtime.StopOnFailure;
import dev.outboxkit.runtime.TracedRecords;
import java.sql.Connection;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * The rows of one claim, in seq order, with the transaction that claimed them still open on
 * {@link #connection}: until that transaction commits, nothing is forgotten. Tracks what became
 * of each row's record.
 *
 * <p>Rows are sent in "waves": with {@code ParkPolicy.CONTINUE} everything is one wave; with
 * {@code HOLD_AGGREGATE} wave k holds each aggregate's k-th row of the batch, and wave k+1 is sent
 * only after wave k was acknowledged, so a refused row holds back the aggregate's later rows even
 * inside one batch. Within a batch a row that failed before it was sent always holds back the
 * later rows of its aggregate. After a failure the relay runs "careful" batches: one row per wave,
 * so a record Kafka refuses can never share a produce request with others.
 */
final class Batch {

    enum State { PENDING, IN_FLIGHT, ACKED, PARKED, FAILED, WITHHELD }

    final Connection connection;
    final ClaimedRow[] rows;
    private final State[] state;
    private final Throwable[] errors;
    /** The topic of each row's record, once it was built (null before or when it could not be). */
    private final String[] topics;
    private final long[] ackMicros;
    private final int[] wave;
    private final int waves;
    private final Clock clock;
    private final AtomicInteger pending = new AtomicInteger();
    private volatile CountDownLatch waveDone = new CountDownLatch(0);
    private int nextWave;
    private final Set<String> blocked = new HashSet<>();
    /** Aggregates blocked from outside (parked in the previous batch, HOLD_AGGREGATE). */
    private final Set<String> blockedFromBefore = new HashSet<>();
    private final long claimedAtNanos = System.nanoTime();
    /** When the relay gives up waiting for this batch's acknowledgements (System.nanoTime). */
    long ackDeadlineNanos;
    /**
     * The batch's phases (System.nanoTime), for the slow-batch trace ({@link ClaimLoop}): when the loop was free to
     * claim it (the previous batch resolved), when its claim began, when its first wave was handed to the producer,
     * when every record had its outcome, and when its commit began and ended.
     */
    long readyNanos;
    long claimStartNanos;
    long sentNanos;
    long resolvedNanos;
    long commitStartNanos;
    long committedNanos;
    /** The leases (and fences) the claim relied on; the commit checks exactly these. */
    final Ownership claimedUnder;

    /**
     * @param waveByAggregate HOLD_AGGREGATE: wave k holds each aggregate's k-th row
     * @param oneByOne        careful mode after a failure: one row per wave, each acknowledged before the next
     */
    Batch(Connection connection, Ownership claimedUnder, List<ClaimedRow> claimed, boolean waveByAggregate, boolean oneByOne,
          Clock clock) {
        this.connection = connection;
        this.claimedUnder = claimedUnder;
        this.rows = claimed.toArray(new ClaimedRow[0]);
        java.util.Arrays.sort(rows, (a, b) -> Long.compare(a.seq, b.seq));
        this.state = new State[rows.length];
        java.util.Arrays.fill(state, State.PENDING);
        this.errors = new Throwable[rows.length];
        this.topics = new String[rows.length];
        this.ackMicros = new long[rows.length];
        this.wave = new int[rows.length];
        this.clock = clock;
        int max = 0;
        if (oneByOne) {
            for (int i = 0; i < rows.length; i++) {
                wave[i] = i;
            }
            max = rows.length - 1;
        } else if (waveByAggregate) {
            Map<String, Integer> seen = new HashMap<>();
            for (int i = 0; i < rows.length; i++) {
                wave[i] = seen.merge(rows[i].aggregateKey(), 1, Integer::sum) - 1;
                max = Math.max(max, wave[i]);
            }
        }
        this.waves = rows.length == 0 ? 0 : max + 1;
    }

    int size() {
        return rows.length;
    }

    /** When the claim returned its rows (System.nanoTime). */
    long claimedAtNanos() {
        return claimedAtNanos;
    }

    long ageNanos() {
        return System.nanoTime() - claimedAtNanos;
    }

    /**
     * One line: where the time between the loop being free and the commit went, in ms; the claim phase is from
     * {@link #claimStartNanos} to the end of the claim statement.
     */
    String phases() {
        // when the claim returned on the batch's clock, derived here so that a batch nobody traces pays nothing for it
        Instant now = clock.instant();
        long claimedAtMicros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000
                - (System.nanoTime() - claimedAtNanos) / 1_000;
        return String.format(java.util.Locale.ROOT,
                "%d rows (the first created %.1f ms before the claim returned): %.1f ms from free to committed: "
                        + "before claim %.1f, claim %.1f, send %.1f, acks %.1f, to commit %.1f, commit %.1f",
                rows.length, rows.length == 0 ? Double.NaN : (claimedAtMicros - rows[0].createdAtMicros()) / 1e3, ms(readyNanos, committedNanos), ms(readyNanos, claimStartNanos),
                ms(claimStartNanos, claimedAtNanos), ms(claimedAtNanos, sentNanos), ms(sentNanos, resolvedNanos),
                ms(resolvedNanos, commitStartNanos), ms(commitStartNanos, committedNanos));
    }

    private static double ms(long from, long to) {
        return from == 0 || to == 0 ? Double.NaN : (to - from) / 1e6;
    }

    /** Rows of these aggregates are not sent (their earlier row was parked by the previous batch). */
    void block(Set<String> aggregates) {
        blockedFromBefore.addAll(aggregates);
    }

    boolean hasMoreWaves() {
        return nextWave < waves;
    }

    /** Sends the next wave's rows; returns how many records went to the producer. */
    int sendWave(StopOnFailure producers, TracedRecords records, boolean holdParked) {
        Producer<byte[], byte[]> producer = producers.producer();
        List<Integer> members = pendingOfWave(nextWave++);
        pending.set(members.size() + 1); // +1: released after the loop, so the wave cannot finish early
        waveDone = new CountDownLatch(1);
        // Topics whose metadata did not come within max.block.ms in this wave: their later rows are not sent.
        Map<String, RuntimeException> deadTopics = new HashMap<>();
        int sent = 0;
        for (int i : members) {
            if (sendRow(i, producers, producer, records, holdParked, deadTopics)) {
                sent++;
            }
        }
        arrive();
        return sent;
    }

    private List<Integer> pendingOfWave(int w) {
        List<Integer> members = new ArrayList<>();
        for (int i = 0; i < rows.length; i++) {
            if (wave[i] == w && state[i] == State.PENDING) {
                members.add(i);
            }
        }
        return members;
    }

    /** Sends row i's record unless its aggregate is blocked, it cannot be built or its topic is down; true when sent. */
    private boolean sendRow(int i, StopOnFailure producers, Producer<byte[], byte[]> producer, TracedRecords records,
                            boolean holdParked, Map<String, RuntimeException> deadTopics) {
        ClaimedRow row = rows[i];
        if ((!blocked.isEmpty() || !blockedFromBefore.isEmpty())
                && (blocked.contains(row.aggregateKey()) || blockedFromBefore.contains(row.aggregateKey()))) {
            state[i] = State.WITHHELD;
            arrive();
            return false;
        }
        TracedRecords.Traced traced;
        try {
            if (row.invalid != null) {
                throw row.invalid;
            }
            traced = records.toRecord(row.event);
        } catch (RuntimeException invalid) {
            failedBeforeSend(i, invalid, holdParked);
            return false;
        }
        ProducerRecord<byte[], byte[]> record = traced.record();
        topics[i] = record.topic();
        RuntimeException topicDown = deadTopics.get(record.topic());
        if (topicDown != null) {
            traced.span().end(null, topicDown);
            failedBeforeSend(i, topicDown, holdParked);
            return false;
        }
        state[i] = State.IN_FLIGHT;
        try {
            // A failure inside send() (no metadata) is held back here, per aggregate: it need not stop the producer.
            Future<RecordMetadata> f = producers.send(producer, traced, false, callback(i));
            if (f.isDone() && state[i] == State.FAILED && errors[i] instanceof TimeoutException t) {
                // No metadata for the topic within max.block.ms: the rest of this topic would wait as long.
                deadTopics.put(record.topic(), t);
                blocked.add(row.aggregateKey());
            } else if (f.isDone() && (state[i] == State.FAILED || state[i] == State.PARKED)) {
                if (state[i] == State.FAILED || holdParked) {
                    blocked.add(row.aggregateKey());
                }
            }
            return true;
        } catch (RuntimeException e) {
            // send() threw instead of failing the future (closed producer, interrupt, buffer): never sent.
            errors[i] = e;
            state[i] = isPoison(e) ? State.PARKED : State.FAILED;
            if (state[i] == State.FAILED || holdParked) {
                blocked.add(row.aggregateKey());
            }
            arrive();
            return false;
        }
    }

    private void failedBeforeSend(int i, RuntimeException error, boolean holdParked) {
        errors[i] = error;
        state[i] = isPoison(error) ? State.PARKED : State.FAILED;
        if (state[i] == State.FAILED || holdParked) {
            blocked.add(rows[i].aggregateKey());
        }
        arrive();
    }

    private static boolean isPoison(Throwable error) {
        return PublishFailures.outcome(error) == PublishFailure.POISON;
    }

    private Callback callback(int i) {
        return (metadata, exception) -> {
            synchronized (this) {
                // An answer after the batch was given up (closeWaves) changes nothing: the settlement reads the
                // states while it counts and forgets, and a row it put back as failed must not count as acknowledged.
                if (state[i] == State.IN_FLIGHT) {
                    if (exception == null) {
                        Instant now = clock.instant();
                        ackMicros[i] = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
                        state[i] = State.ACKED;
                    } else {
                        errors[i] = exception;
                        state[i] = isPoison(exception) ? State.PARKED : State.FAILED;
                    }
                }
            }
            arrive();
        };
    }

    private void arrive() {
        if (pending.decrementAndGet() == 0) {
            waveDone.countDown();
        }
    }

    /** Waits until the current wave is resolved or {@code deadlineNanos} passes; true when resolved. */
    boolean awaitWave(long deadlineNanos) throws InterruptedException {
        long wait = deadlineNanos - System.nanoTime();
        return waveDone.await(Math.max(0, wait), TimeUnit.NANOSECONDS);
    }

    /** True when every record handed to the producer has its outcome (acked or failed). */
    boolean settled() {
        return waveDone.getCount() == 0;
    }

    /**
     * After the last wave (or a timeout): rows still in flight count as failed (their outcome is
     * unknown; Kafka may still take them, which is a harmless duplicate later), unsent rows as
     * withheld. From here on the states are final: a late acknowledgement no longer turns a failed row into
     * an acknowledged one while the settlement reads them (it used to, and the published counter then missed
     * rows that were forgotten as acknowledged). HOLD_AGGREGATE: blocks the aggregates that failed so later waves skip them.
     */
    synchronized void closeWaves() {
        for (int i = 0; i < rows.length; i++) {
            if (state[i] == State.IN_FLIGHT) {
                state[i] = State.FAILED;
                errors[i] = new TimeoutException("no acknowledgement from Kafka in time (batch given up)");
            } else if (state[i] == State.PENDING) {
                state[i] = State.WITHHELD;
            }
        }
        nextWave = waves;
    }

    /** Between waves: aggregates with a row that did not make it hold back their later rows. */
    void blockFailedAggregates(boolean holdParked) {
        for (int i = 0; i < rows.length; i++) {
            if (state[i] == State.FAILED || state[i] == State.WITHHELD || (holdParked && state[i] == State.PARKED)) {
                blocked.add(rows[i].aggregateKey());
            }
        }
    }

    /** Marks every unsent row withheld (the batch is abandoned before sending). */
    void withholdAll() {
        for (int i = 0; i < rows.length; i++) {
            if (state[i] == State.PENDING) {
                state[i] = State.WITHHELD;
            }
        }
        nextWave = waves;
    }

    State state(int i) {
        return state[i];
    }

    /** The topic of row {@code i}'s record; null when it was never built. */
    String topic(int i) {
        return topics[i];
    }

    Throwable error(int i) {
        return errors[i];
    }

    long ackMicros(int i) {
        return ackMicros[i];
    }

    int count(State s) {
        int n = 0;
        for (State x : state) {
            if (x == s) {
                n++;
            }
        }
        return n;
    }

    /** Aggregates of parked rows (HOLD_AGGREGATE blocks them in the next batch). */
    Set<String> parkedAggregates() {
        Set<String> out = new HashSet<>();
        for (int i = 0; i < rows.length; i++) {
            if (state[i] == State.PARKED) {
                out.add(rows[i].aggregateKey());
            }
        }
        return out;
    }

    /** Distinct partitions of the batch's rows (for the fence check at commit). */
    int[] partitions() {
        TreeSet<Integer> p = new TreeSet<>();
        for (ClaimedRow r : rows) {
            p.add(r.partition);
        }
        return p.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * Rows acknowledged after an earlier row of the same aggregate failed in this batch: Kafka
     * may then hold them ahead of it (the idempotent producer keeps a partition's order unless a
     * batch expires). Counted and logged; HOLD_AGGREGATE's waves rule it out.
     */
    int orderRisks() {
        Map<String, Long> firstFailure = new HashMap<>();
        for (int i = 0; i < rows.length; i++) {
            if (state[i] == State.FAILED) {
                firstFailure.putIfAbsent(rows[i].aggregateKey(), rows[i].seq);
            }
        }
        if (firstFailure.isEmpty()) {
            return 0;
        }
        int risks = 0;
        for (int i = 0; i < rows.length; i++) {
            if (state[i] == State.ACKED) {
                Long failed = firstFailure.get(rows[i].aggregateKey());
                if (failed != null && failed < rows[i].seq) {
                    risks++;
                }
            }
        }
        return risks;
    }
}
