package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The namastack-outbox peer (module {@code benchmarks/peer-namastack}) running in this JVM, in a class loader of
 * its own ({@link IsolatedPeer}). One instance is one started application; {@link #close()} stops it.
 */
public final class NamastackPeer extends IsolatedPeerApp {

    private static final String PEER = "dev.outboxkit.benchmarks.peer.namastack.Peer";
    /** How long a fresh peer may take to own namastack-outbox's partitions before a measurement gives up. */
    private static final Duration READY = Duration.ofMinutes(2);

    private static final Logger log = LoggerFactory.getLogger(NamastackPeer.class);

    private NamastackPeer(IsolatedPeer peer) {
        super(peer);
    }

    /**
     * Starts the peer application on {@code db}, publishing to {@code topic} on {@code bootstrap}, and waits until
     * it polls its whole table ({@link #awaitReady()}).
     */
    public static NamastackPeer start(TestDatabase db, String bootstrap, String topic) throws Exception {
        NamastackPeer peer = start(db.jdbcUrl(), db.user(), db.password(), bootstrap, topic);
        try {
            peer.awaitReady();
        } catch (Exception e) {
            peer.close();
            throw e;
        }
        return peer;
    }

    /** Starts the peer application without waiting for its partitions (a restart after a crash). */
    public static NamastackPeer start(String jdbcUrl, String user, String password, String bootstrap, String topic)
            throws Exception {
        long start = System.nanoTime();
        NamastackPeer peer = new NamastackPeer(IsolatedPeer.start("namastack-peer", PEER, jdbcUrl, user, password,
                bootstrap, topic));
        log.info("namastack-outbox peer started in {} ms", (System.nanoTime() - start) / 1_000_000);
        return peer;
    }

    /** Waits until this instance owns every partition of namastack-outbox (a lone instance claims them at start). */
    public void awaitReady() throws Exception {
        long start = System.nanoTime();
        peer.call("awaitReady", READY.toMillis());
        log.info("namastack-outbox peer owns its partitions after {} ms", (System.nanoTime() - start) / 1_000_000);
    }

    /** Events {@code first}, …, {@code first + count - 1} of {@code bytes} bytes in one transaction. */
    public void publishAll(long first, int count, int bytes) throws Exception {
        String[] ids = new String[count];
        String[] aggregates = new String[count];
        long[] ns = new long[count];
        String[] payloads = new String[count];
        for (int i = 0; i < count; i++) {
            long n = first + i;
            ids[i] = EventIds.next().toString();
            aggregates[i] = SyntheticEvents.aggregateId(n);
            ns[i] = n;
            payloads[i] = SyntheticEvents.payload(n, bytes);
        }
        peer.call("publishAll", ids, aggregates, ns, payloads);
    }

    @Override
    public void close() throws Exception {
        long start = System.nanoTime();
        super.close();
        log.info("namastack-outbox peer stopped in {} ms", (System.nanoTime() - start) / 1_000_000);
    }
}
