package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.Secret;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.StopOnFailure;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a standby's warm-up asks of the producer and of the database (issue 30, item 3): only while it stands by,
 * the metadata of the topics the newest rows route to (at most {@code MAX_TOPICS}), again once rows appear in a table
 * that had none; and it sends nothing and changes no row. That a warm producer shortens a takeover is measured by the
 * failover benchmark and asserted by {@code HandoffTest}; this test pins the warm-up's own contract. The producer is a
 * recording stub, the table is real.
 */
@ExtendWith(OutboxTestkitExtension.class)
class StandbyWarmupTest {

    private final List<String> asked = new CopyOnWriteArrayList<>();
    private final MockProducer<byte[], byte[]> producer = new MockProducer<byte[], byte[]>(true, null, new ByteArraySerializer(),
            new ByteArraySerializer()) {
        @Override
        public synchronized List<PartitionInfo> partitionsFor(String topic) {
            asked.add(topic);
            return List.of();
        }
    };

    private StandbyWarmup warmup(TestDatabase db, AtomicBoolean standingBy) {
        CdcSettings settings = TestSettings.of(new DatabaseLogin(db.jdbcUrl(), db.user(), Secret.of(db.password())),
                "warm_slot", "instance-w", Map.of());
        return new StandbyWarmup(CdcWiring.slotTerms(settings), settings.route(), settings.producerConfig(), db.dataSource(), new StopOnFailure(() -> producer, "test"), standingBy::get);
    }

    @Test
    void aStandbyFetchesTheTopicsOfTheNewestRowsAndSendsNothing(TestDatabase db) throws Exception {
        insert(db, "order", 3);
        insert(db, "invoice", 2);
        AtomicBoolean standingBy = new AtomicBoolean(false);
        StandbyWarmup warmup = warmup(db, standingBy);

        warmup.run();
        assertThat(asked).as("an active relay (not standing by) warms nothing").isEmpty();

        standingBy.set(true);
        warmup.run();
        assertThat(asked).containsExactlyInAnyOrder("outbox.event.order", "outbox.event.invoice");
        assertThat(producer.history()).as("nothing is sent").isEmpty();
        assertThat(db.count("SELECT count(*) FROM outbox_event")).as("no row is deleted or changed").isEqualTo(5);
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    }

    @Test
    void anEmptyTableIsSampledAgainUntilRowsAppear(TestDatabase db) throws Exception {
        StandbyWarmup warmup = warmup(db, new AtomicBoolean(true));
        warmup.run();
        assertThat(asked).as("no row, no topic to learn").isEmpty();

        insert(db, "payment", 1);
        // the next look comes StandbyWarmup.RETRY (1 s) after the empty one, as the Supervisor schedules it
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            warmup.run();
            return !asked.isEmpty();
        });
        assertThat(asked).containsExactly("outbox.event.payment");
        assertThat(producer.history()).isEmpty();
    }

    @Test
    void atMostTwentyTopicsPerLook(TestDatabase db) throws Exception {
        for (int i = 0; i < 30; i++) {
            insert(db, "type" + i, 1);
        }
        warmup(db, new AtomicBoolean(true)).run();
        assertThat(asked).hasSize(20).doesNotHaveDuplicates();
        // the newest rows first: the last twenty types inserted
        assertThat(asked).contains("outbox.event.type29", "outbox.event.type10").doesNotContain("outbox.event.type9");
    }

    private static void insert(TestDatabase db, String aggregateType, int rows) throws Exception {
        db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT gen_random_uuid(), '" + aggregateType + "', i::text, 'E', '{}' FROM generate_series(0, "
                + (rows - 1) + ") i");
    }
}
