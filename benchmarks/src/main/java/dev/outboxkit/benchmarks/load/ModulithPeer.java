package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.TestDatabase;
import java.util.List;
import java.util.UUID;

/**
 * The Spring Modulith peer (module {@code benchmarks/peer-modulith}) running in this JVM, in a class loader of its
 * own ({@link IsolatedPeer}). One instance is one started application; {@link #close()} stops it.
 */
public final class ModulithPeer extends IsolatedPeerApp {

    private static final String PEER = "dev.outboxkit.benchmarks.peer.modulith.Peer";

    private ModulithPeer(IsolatedPeer peer) {
        super(peer);
    }

    /** Starts the peer application on {@code db}, publishing to {@code topic} on {@code bootstrap}. */
    public static ModulithPeer start(TestDatabase db, String bootstrap, String topic) throws Exception {
        return start(db.jdbcUrl(), db.user(), db.password(), bootstrap, topic);
    }

    public static ModulithPeer start(String jdbcUrl, String user, String password, String bootstrap, String topic)
            throws Exception {
        return new ModulithPeer(IsolatedPeer.start("modulith-peer", PEER, jdbcUrl, user, password, bootstrap, topic));
    }

    /** {@code listener_id}, {@code event_type}, {@code status} and {@code completion_attempts} of a new registry row. */
    @SuppressWarnings("unchecked")
    public List<String> registryRow() throws Exception {
        return (List<String>) peer.call("registryRow");
    }

    /** {@code serialized_event} of this event, by the peer's own serializer. */
    public String serializedEvent(UUID id, String aggregateId, long n, String payload) throws Exception {
        return (String) peer.call("serializedEvent", id.toString(), aggregateId, n, payload);
    }

    /** Resubmits every incomplete publication (returns once they are handed to the listener's executor). */
    public void resubmitIncomplete() throws Exception {
        peer.call("resubmitIncomplete");
    }

    /** Deletes completed publications. */
    public void purgeCompleted() throws Exception {
        peer.call("purgeCompleted");
    }

    /** The default completion mode keeps completed rows; the documentation asks applications to purge them. */
    @Override
    public void betweenRates() throws Exception {
        purgeCompleted();
    }
}
