package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Sizes;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.EventIdReader;
import dev.outboxkit.benchmarks.load.ModulithPeer;
import dev.outboxkit.benchmarks.load.TopicRecords;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;

/**
 * {@code modulith_drain_eps}: the Spring Modulith peer ({@link ModulithPeer}) publishing a backlog of the same
 * events: {@link Sizes#peerBacklogEvents()} incomplete publications in its registry ({@link Backlog#fillModulith}:
 * the rows the peer itself writes, vacuumed and checkpointed the same way). The clock runs from the documented
 * resubmission ({@code IncompleteEventPublications.resubmitIncompletePublications}, what a restart with
 * {@code republish-outstanding-events-on-restart} runs) until Kafka holds every event (the topic's end offsets).
 * The runner divides {@code poller_drain_eps} by it ({@code poller_vs_modulith_drain}).
 */
public final class ModulithDrain extends BacklogDrain {

    public ModulithDrain() {
        super("modulith_drain", MetricCatalog.MODULITH_DRAIN_EPS, "modulith", "the Spring Modulith peer's drain");
    }

    @Override
    int backlog(Sizes sizes) {
        return sizes.peerBacklogEvents();
    }

    @Override
    void drain(BenchContext context, TestDatabase db, int backlog, DrainClock clock) throws Exception {
        String topic = context.uniqueTopic("modulith-drain");
        context.kafka().createTopic(topic, PARTITIONS);
        String bootstrap = context.kafka().bootstrapServers();
        try (ModulithPeer peer = ModulithPeer.start(db, bootstrap, topic);
             TopicRecords records = new TopicRecords(bootstrap, topic, EventIdReader.JSON_ID_FIELD)) {
            Backlog.fillModulith(db, peer, backlog, context.payloadBytes());
            clock.start();
            peer.resubmitIncomplete();
            Await.until("Spring Modulith publishing " + backlog + " events", () -> records.count() >= backlog,
                    Duration.ofMinutes(2).plusMillis(20L * backlog), 5, () -> null); // it may drain at 50/s
            clock.stop();
        }
    }
}
