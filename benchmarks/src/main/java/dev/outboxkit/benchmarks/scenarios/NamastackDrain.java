package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Sizes;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.EventIdReader;
import dev.outboxkit.benchmarks.load.NamastackPeer;
import dev.outboxkit.benchmarks.load.TopicRecords;
import dev.outboxkit.testkit.TestDatabase;

/**
 * {@code namastack_drain_eps}: the namastack-outbox peer ({@link NamastackPeer}) publishing a backlog of the same
 * events: {@link Sizes#peerBacklogEvents()} records scheduled through its own {@code Outbox.schedule} in one
 * transaction while it runs and owns all of its partitions, so the whole backlog appears at that commit, as a
 * COPY's rows do for {@code cdc_drain}. The clock runs from the commit until Kafka holds every event (the topic's
 * end offsets). The runner divides {@code poller_drain_eps} by it ({@code poller_vs_namastack_drain}).
 */
public final class NamastackDrain extends BacklogDrain {

    public NamastackDrain() {
        super("namastack_drain", MetricCatalog.NAMASTACK_DRAIN_EPS, "namastack", "the namastack-outbox peer's drain");
    }

    @Override
    int backlog(Sizes sizes) {
        return sizes.peerBacklogEvents();
    }

    @Override
    void drain(BenchContext context, TestDatabase db, int backlog, DrainClock clock) throws Exception {
        String topic = context.uniqueTopic("namastack-drain");
        context.kafka().createTopic(topic, PARTITIONS);
        String bootstrap = context.kafka().bootstrapServers();
        try (NamastackPeer peer = NamastackPeer.start(db, bootstrap, topic);
             TopicRecords records = new TopicRecords(bootstrap, topic, EventIdReader.JSON_ID_FIELD)) {
            peer.publishAll(0, backlog, context.payloadBytes());
            clock.start();
            Await.until("namastack-outbox publishing " + backlog + " events", () -> records.count() >= backlog,
                    drainTimeout(backlog).plusMillis(19L * backlog), 5, () -> null); // as slow as 50/s still finishes
            clock.stop();
        }
    }
}
