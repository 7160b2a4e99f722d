package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.UnsafeConfigurationException;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class PollingRelayBuilderTest {

    private static PollingRelay.Builder valid() {
        return PollingRelay.builder()
                .jdbcUrl("jdbc:postgresql://127.0.0.1:1/none").user("relay").password(Secret.of("pw"))
                .bootstrapServers("localhost:9092");
    }

    @Test
    void unsafeProducerOverridesAreRefusedNamingTheKey() {
        assertThatThrownBy(() -> valid().producerOverrides(Map.of("acks", "1")).build())
                .isInstanceOfSatisfying(UnsafeConfigurationException.class, e -> assertThat(e.key()).isEqualTo("acks"))
                .hasMessageContaining("acks=1");
        assertThatThrownBy(() -> valid().producerOverrides(Map.of("enable.idempotence", "false")).build())
                .isInstanceOfSatisfying(UnsafeConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo("enable.idempotence"));
        assertThatThrownBy(() -> valid().producerOverrides(Map.of("max.in.flight.requests.per.connection", 6)).build())
                .isInstanceOfSatisfying(UnsafeConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo("max.in.flight.requests.per.connection"));
        assertThatThrownBy(() -> valid().producerOverrides(Map.of("transactional.id", "x")).build())
                .isInstanceOf(UnsafeConfigurationException.class);
        // Safe overrides (SASL, tuning) pass.
        valid().producerOverrides(Map.of("linger.ms", "5", "security.protocol", "PLAINTEXT", "acks", "all")).build().close();
    }

    @Test
    void theUserMayComeFromTheUrlAndOneRequestInFlightFromTheSharedDefaults() {
        try (PollingRelay relay = PollingRelay.builder().jdbcUrl("jdbc:postgresql://127.0.0.1:1/none?user=relay&password=pw")
                .bootstrapServers("localhost:9092").build()) {
            assertThat(relay.producerConfig()).containsEntry("max.in.flight.requests.per.connection", "1");
        }
    }

    @Test
    void settingsOutOfRangeAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> valid().batchSize(0).build()).hasMessage("batchSize must be between 1 and 50000, got 0");
        assertThatThrownBy(() -> valid().partitions(0).build()).hasMessageStartingWith("partitions must be between 1 and 4096");
        assertThatThrownBy(() -> valid().maxAttempts(0).build()).hasMessageStartingWith("maxAttempts must be");
        assertThatThrownBy(() -> valid().claimLoops(0).build()).hasMessage("claimLoops must be between 1 and 64, got 0");
        assertThatThrownBy(() -> valid().partitions(4).claimLoops(5).build())
                .hasMessageStartingWith("claimLoops must be at most partitions (4), got 5");
        assertThatThrownBy(() -> valid().leaseDuration(Duration.ofMillis(500)).build())
                .hasMessageStartingWith("leaseDuration must be between PT2S and PT10M");
        assertThatThrownBy(() -> valid().maxPollDelay(Duration.ZERO).build()).hasMessageStartingWith("maxPollDelay must be");
        assertThatThrownBy(() -> valid().schema("Bad-Schema").build()).hasMessageContaining("schema 'Bad-Schema'");
        assertThatThrownBy(() -> valid().schema("select").build()).hasMessageContaining("reserved");
        assertThatThrownBy(() -> valid().bootstrapServers(" ").build()).hasMessageStartingWith("bootstrapServers must be set");
        assertThatThrownBy(() -> valid().instanceId("has space").build()).hasMessageStartingWith("instanceId must be");
        assertThatThrownBy(() -> valid().user(null).build()).hasMessageStartingWith("user is required: set user(…)");
        assertThatThrownBy(() -> PollingRelay.builder().bootstrapServers("k:9092").build())
                .hasMessage("set either dataSource or jdbcUrl (with user and password)");
        assertThatThrownBy(() -> valid().dataSource(new org.postgresql.ds.PGSimpleDataSource()).build())
                .hasMessage("set dataSource or jdbcUrl, not both");
        assertThatThrownBy(() -> valid().jdbcUrl("jdbc:mysql://h/db?password=hunter2").build())
                .hasMessageStartingWith("jdbcUrl must start with jdbc:postgresql:")
                .hasMessageNotContaining("hunter2");
        // several hosts: only with targetServerType=primary, else the driver may pick a (read-only) standby
        assertThatThrownBy(() -> valid().jdbcUrl("jdbc:postgresql://h1:5432,h2:5432/db?password=hunter2").build())
                .hasMessageContaining("names 2 hosts with no targetServerType").hasMessageNotContaining("hunter2");
        assertThat(valid().jdbcUrl("jdbc:postgresql://h1:5432,h2:5432/db?targetServerType=primary").build()).isNotNull();
    }

    @Test
    void startRefusesADatabaseWithoutTheSchemaAndSaysWhatToDo(TestPostgres postgres) {
        TestDatabase empty = postgres.newEmptyDatabase();
        try (PollingRelay relay = PollingRelay.builder().dataSource(empty.dataSource())
                .bootstrapServers("localhost:9092").build()) {
            assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no outbox_event table").hasMessageContaining("outbox migrate");
            assertThat(relay.health().ready()).isFalse();
        } finally {
            postgres.drop(empty);
        }
    }

    @Test
    void startRefusesAnUnreachableDatabaseWithoutLeakingThePassword() {
        try (PollingRelay relay = valid().password(Secret.of("s3cret-pw")).startTimeout(java.time.Duration.ZERO).build()) {
            assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("cannot reach the database").hasMessageNotContaining("s3cret-pw");
        }
    }
}
