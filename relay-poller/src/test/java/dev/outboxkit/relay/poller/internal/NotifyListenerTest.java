package dev.outboxkit.relay.poller.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class NotifyListenerTest {

    @Test
    void anInsertWakesTheSleepingLoopThroughTheV3TriggerAndOtherSchemasDoNot(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TRIGGER outbox_event_notify AFTER INSERT ON outbox_event "
                    + "FOR EACH STATEMENT EXECUTE FUNCTION outbox_event_notify()");
        }
        Waker waker = new Waker();
        NotifyListener listener = new NotifyListener(db.dataSource(), "public", "test", waker);
        Thread t = new Thread(listener, "listen-test");
        t.start();
        try {
            // The listener wakes the loop once when it starts listening; take that away first.
            assertThat(waker.sleep(TimeUnit.SECONDS.toNanos(30))).isTrue();
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                s.execute("SELECT pg_notify('outbox_event', 'another_schema')");
                assertThat(waker.sleep(TimeUnit.MILLISECONDS.toNanos(1500))).as("a notification for another schema").isFalse();
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                        + "VALUES (gen_random_uuid(), 'a', '1', 'e', '{}')");
            }
            long start = System.nanoTime();
            assertThat(waker.sleep(TimeUnit.SECONDS.toNanos(30))).isTrue();
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(10));
        } finally {
            listener.stop();
            t.join(10_000);
        }
    }
}
