package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.time.Duration;

/** Waits on outbox_event (rows are written with the testkit's {@code OutboxRows}). */
final class Outbox {

    private Outbox() {
    }

    /** Waits until outbox_event holds no row that another transaction can see. */
    static void awaitEmpty(TestDatabase db, Duration timeout) {
        await().atMost(timeout).untilAsserted(() -> {
            try (Connection c = db.connect()) {
                assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event")).isZero();
            }
        });
    }
}
