package dev.outboxkit.runtime;

import dev.outboxkit.relay.PublishFailure;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Not API: shared by both relays and consumer-dedupe.
 *
 * <p>Whether Kafka accepts this client's writes now: the one readiness rule for writes. Not ready while writes
 * handed to Kafka wait and Kafka has acknowledged none of them for {@link #SILENCE_LIMIT}. A client whose
 * acknowledgements flow stays ready however many records wait behind them (the clock restarts with every
 * acknowledgement); a client with nothing in flight has no write to judge and stays ready (its reachability probe
 * still judges whether Kafka answers at all).
 *
 * <p>Why it is needed: a cluster below {@code min.insync.replicas}, or with a partition that has no leader, still
 * answers {@code describeCluster}, and the idempotent producer retries such refusals (NOT_ENOUGH_REPLICAS,
 * NOT_LEADER_OR_FOLLOWER, request timeouts) inside itself until {@code delivery.timeout.ms} before any callback
 * fires: nothing else says that no write gets through.
 *
 * <p>A refusal (an error answer that is not the record's own fault) does not restart the clock: a client that
 * fails and retries without an acknowledgement in between is judged from the first write after its last
 * acknowledgement. Between a refusal and its retry nothing waits, so nothing is judged: the relays' own rules cover
 * that gap (a CDC relay restarting its session, a polling relay's failed batch). A record Kafka refuses for good
 * ({@link PublishFailure#POISON}: too large, invalid topic) is an answer, not a refusal of writes.
 *
 * <p>Every write is counted once by {@link #handedOver} and answered once through its {@link Pending}. It also keeps
 * the topics written to ({@link #topics()}, {@link #newTopics()}) for the durability check and the diagnosis.
 * Thread-safe; costs one atomic increment and decrement per record.
 */
public final class KafkaWrites {

    /**
     * Readiness drops when writes wait and Kafka acknowledged none of them for this long: far above a healthy
     * cluster's acknowledgement (milliseconds), so a loaded relay does not flap; short enough that a relay is not
     * ready within 10 s of Kafka refusing its writes, together with a health check's own period.
     */
    public static final Duration SILENCE_LIMIT = Duration.ofSeconds(5);

    /** How many topic names it keeps at most: a route by aggregate type has few; a runaway one must not grow memory. */
    static final int MAX_TOPICS = 1_000;

    private static final AtomicIntegerFieldUpdater<Pending> ANSWERED =
            AtomicIntegerFieldUpdater.newUpdater(Pending.class, "answered");

    private final LongSupplier nanos;
    private final String what;
    private final AtomicLong waiting = new AtomicLong();
    /** When the current wait without an acknowledgement began (System.nanoTime), or 0 before any write. */
    private volatile long quietSinceNanos;
    private volatile boolean refusedSinceAck;
    /** When Kafka last acknowledged a write (System.nanoTime), or 0. */
    private volatile long lastAckNanos;
    private volatile String lastRefusal;
    private final Set<String> topics = ConcurrentHashMap.newKeySet();
    private final Queue<String> newTopics = new ConcurrentLinkedQueue<>();
    /** The last topic counted, so a run of records to one topic costs an equals, not a set lookup. */
    private volatile String lastTopic;

    /** @param what what the writes are, for the detail (e.g. {@code "records"}, {@code "offset commits"}) */
    public KafkaWrites(String what) {
        this(what, System::nanoTime);
    }

    KafkaWrites(String what, LongSupplier nanos) {
        this.what = what;
        this.nanos = nanos;
    }

    /** One write handed to Kafka ({@code topic} may be null: an offset commit); answer it through the result once. */
    public Pending handedOver(String topic) {
        if (topic != null && !topic.equals(lastTopic)) {
            lastTopic = topic;
            if (topics.size() < MAX_TOPICS && topics.add(topic)) {
                newTopics.add(topic);
            }
        }
        if (waiting.getAndIncrement() <= 0 && !refusedSinceAck) {
            quietSinceNanos = nanos.getAsLong(); // nothing waited: the wait starts now
        }
        return new Pending(this);
    }

    /** A write on its way; exactly one of its methods counts (later calls change nothing). */
    public static final class Pending {
        private final KafkaWrites writes;
        volatile int answered;

        private Pending(KafkaWrites writes) {
            this.writes = writes;
        }

        /** Kafka's answer: null for an acknowledgement, else the error. */
        public void answered(Throwable error) {
            if (ANSWERED.compareAndSet(this, 0, 1)) {
                writes.answer(error);
            }
        }

        /** The write never reached Kafka's judgement (a wake-up, an interrupt): it only stops waiting. */
        public void abandoned() {
            if (ANSWERED.compareAndSet(this, 0, 1)) {
                writes.waiting.decrementAndGet();
            }
        }
    }

    private void answer(Throwable error) {
        if (error == null) {
            refusedSinceAck = false;
            long now = nanos.getAsLong();
            lastAckNanos = now;
            quietSinceNanos = now; // acknowledgements flow: whatever still waits is judged from here
        } else if (PublishFailures.outcome(error) != PublishFailure.POISON) {
            lastRefusal = PublishFailures.classify(error).describe();
            refusedSinceAck = true;
        }
        waiting.decrementAndGet();
    }

    /** How long Kafka has acknowledged none of the waiting writes; zero when nothing waits. */
    public Duration silence() {
        long since = quietSinceNanos;
        if (since == 0 || waiting.get() <= 0) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, nanos.getAsLong() - since));
    }

    /** {@link #silence()} in seconds, for a gauge. */
    public double silenceSeconds() {
        return silence().toNanos() / 1e9;
    }

    /** Null while Kafka accepts the writes (or nothing waits), else what waits and for how long (one line). */
    public String problem() {
        Duration silence = silence();
        if (silence.compareTo(SILENCE_LIMIT) < 0) {
            return null;
        }
        long n = Math.max(0, waiting.get());
        String refusal = refusedSinceAck ? lastRefusal : null;
        return "Kafka accepts no writes now: it has acknowledged none of this client's " + what + " for "
                + silence.toSeconds() + " s (" + n + " waiting" + (refusal == null ? "" : "; last refusal: " + refusal)
                + ")";
    }

    /** Whether Kafka acknowledged a write after {@code nanos} (System.nanoTime). */
    public boolean acknowledgedSince(long nanos) {
        long at = lastAckNanos;
        return at != 0 && at - nanos > 0;
    }

    /** Writes handed over and not answered yet. */
    public long waiting() {
        return Math.max(0, waiting.get());
    }

    /** Every topic written to so far (at most {@value #MAX_TOPICS}). */
    public Set<String> topics() {
        return Set.copyOf(topics);
    }

    /** Topics written to for the first time since the last call (each returned once). */
    public List<String> newTopics() {
        List<String> out = new java.util.ArrayList<>();
        for (String t; (t = newTopics.poll()) != null; ) {
            out.add(t);
        }
        return out;
    }
}
