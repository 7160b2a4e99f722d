package dev.outboxkit.benchmarks.load;

import java.util.UUID;

/**
 * What the peers loaded in a class loader of their own share: their entry classes offer {@code publish},
 * {@code transfer}, {@code publishRecorded} and {@code close} with the same JDK-typed parameters.
 */
abstract class IsolatedPeerApp implements PeerApp {

    final IsolatedPeer peer;

    IsolatedPeerApp(IsolatedPeer peer) {
        this.peer = peer;
    }

    @Override
    public void publish(UUID id, String aggregateId, long n, String payload) throws Exception {
        peer.call("publish", id.toString(), aggregateId, n, payload);
    }

    @Override
    public void transfer(int from, int to, long amount, UUID id, String aggregateId, long n, String payload)
            throws Exception {
        peer.call("transfer", from, to, amount, id == null ? null : id.toString(), aggregateId, n, payload);
    }

    @Override
    public void publishRecorded(UUID id, String aggregateId, long n, String payload) throws Exception {
        peer.call("publishRecorded", id.toString(), aggregateId, n, payload);
    }

    @Override
    public void close() throws Exception {
        peer.close();
    }
}
