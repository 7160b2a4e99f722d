package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.relay.UnsafeConfigurationException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** Configuration is checked in build(), before anything connects; every message names the setting. */
class DedupeConsumerBuilderTest {

    private static DedupeConsumer.Builder valid() {
        return DedupeConsumer.builder()
                .bootstrapServers("127.0.0.1:9")
                .group("projection")
                .topics(List.of("outbox.event.order"))
                .dataSource(new PGSimpleDataSource())
                .handler((c, e) -> { });
    }

    @Test
    void aValidConfigurationBuildsWithoutConnecting() {
        try (DedupeConsumer consumer = valid().build()) {
            assertThat(consumer.group()).isEqualTo("projection");
            assertThat(consumer.health().live()).isFalse();
        }
    }

    @Test
    void autoCommitIsRefusedWithAMessageNamingTheKey() {
        assertThatThrownBy(() -> valid().kafkaProperties(Map.of("enable.auto.commit", "true")).build())
                .isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("enable.auto.commit=true")
                .hasMessageContaining("only after the database transaction committed")
                .satisfies(e -> assertThat(((UnsafeConfigurationException) e).key()).isEqualTo("enable.auto.commit"));
        assertThatThrownBy(() -> valid().kafkaProperties(Map.of("enable.auto.commit", Boolean.TRUE)).build())
                .isInstanceOf(UnsafeConfigurationException.class);
        // false is what the consumer uses anyway
        valid().kafkaProperties(Map.of("enable.auto.commit", "false")).build().close();
    }

    @Test
    void missingAndInvalidSettingsAreNamed() {
        assertThatThrownBy(() -> valid().bootstrapServers(null).build()).hasMessageContaining("bootstrapServers");
        assertThatThrownBy(() -> valid().group(" ").build()).hasMessageContaining("group must be set");
        assertThatThrownBy(() -> valid().topics(null).build()).hasMessageContaining("exactly one of topics and topicPattern");
        assertThatThrownBy(() -> valid().topicPattern(Pattern.compile("x.*")).build())
                .hasMessageContaining("(both are set)");
        assertThatThrownBy(() -> valid().topics(List.of("bad topic")).build()).hasMessageContaining("topics:");
        assertThatThrownBy(() -> valid().dataSource(null).build()).hasMessageContaining("dataSource");
        assertThatThrownBy(() -> valid().schema("public; drop table x").build())
                .hasMessageContaining("schema 'public; drop table x' is not a legal identifier");
        assertThatThrownBy(() -> valid().handler(null).build()).hasMessageContaining("handler or a batchHandler");
        assertThatThrownBy(() -> valid().idHeader("").build()).hasMessageContaining("idHeader");
        assertThatThrownBy(() -> valid().maxAttempts(0).build())
                .hasMessage("maxAttempts must be between 1 and 100, got 0");
        assertThatThrownBy(() -> valid().backoff(Duration.ZERO).build()).hasMessageContaining("backoff must be between");
        assertThatThrownBy(() -> valid().backoff(Duration.ofSeconds(2)).maxBackoff(Duration.ofSeconds(1)).build())
                .hasMessageContaining("maxBackoff must be between 2s");
        assertThatThrownBy(() -> valid().retention(Duration.ofSeconds(5)).build())
                .hasMessageContaining("retention must be between 1m");
        assertThatThrownBy(() -> valid().kafkaProperties(Map.of("group.id", "other")).build())
                .hasMessageContaining("group.id=other differs from group=projection");
        assertThatThrownBy(() -> valid().kafkaProperties(Map.of("value.deserializer", StringDeserializer.class.getName())).build())
                .hasMessageContaining("value.deserializer");
    }

    @Test
    void deadLetterAndReviewTopicsMustBeLegalAndNotTheSourceItself() {
        assertThatThrownBy(() -> valid().deadLetterTopic(t -> t).build())
                .hasMessageContaining("deadLetterTopic sends records of outbox.event.order back to outbox.event.order");
        assertThatThrownBy(() -> valid().deadLetterTopic(t -> t + " dlq").build())
                .hasMessageContaining("deadLetterTopic gives an illegal topic");
        assertThatThrownBy(() -> valid().lateArrivalPolicy(LateArrivalPolicy.routeTo(t -> t)).build())
                .hasMessageContaining("lateArrivalPolicy sends records");
    }

    @Test
    void bootstrapServersMayComeFromTheKafkaProperties() {
        try (DedupeConsumer consumer = valid().bootstrapServers(null)
                .kafkaProperties(Map.of("bootstrap.servers", "127.0.0.1:19092")).build()) {
            // the consumer's config, and the servers its dead-letter producer and retention admin client use
            assertThat(consumer.settings().consumerConfig()).containsEntry("bootstrap.servers", "127.0.0.1:19092");
            assertThat(consumer.settings().bootstrapServers()).isEqualTo("127.0.0.1:19092");
        }
        try (DedupeConsumer consumer = valid().bootstrapServers("127.0.0.1:29092")
                .kafkaProperties(Map.of("bootstrap.servers", "127.0.0.1:19092")).build()) {
            assertThat(consumer.settings().consumerConfig()).as("the builder's own setting wins")
                    .containsEntry("bootstrap.servers", "127.0.0.1:29092");
            assertThat(consumer.settings().bootstrapServers()).isEqualTo("127.0.0.1:29092");
        }
        assertThatThrownBy(() -> valid().bootstrapServers(null).kafkaProperties(Map.of("bootstrap.servers", " ")).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bootstrapServers must be set (or bootstrap.servers in kafkaProperties)");
    }

    @Test
    void startTwiceOrAfterCloseIsRefused() {
        DedupeConsumer consumer = valid().build();
        consumer.close();
        assertThatThrownBy(consumer::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
    }
}
