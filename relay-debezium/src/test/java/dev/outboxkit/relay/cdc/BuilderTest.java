package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.UnsafeConfigurationException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Configuration is validated in build(), with messages that name the setting. */
class BuilderTest {

    private static CdcRelay.Builder valid() {
        return CdcRelay.builder().jdbcUrl("jdbc:postgresql://db:5432/shop?password=s3cret").user("relay")
                .password(Secret.of("s3cret")).bootstrapServers("kafka:9092");
    }

    @Test
    void defaultsBuildAndNeverPrintTheSecret() {
        CdcRelay relay = valid().build();
        assertThat(relay.slotName()).isEqualTo("outboxkit_slot");
        assertThat(relay.instanceId()).isNotBlank();
        assertThat(relay.role()).isEqualTo(CdcRelay.Role.NEW);
        assertThat(relay.health().live()).isTrue();
        assertThat(relay.health().ready()).isFalse();
        // the password left the URL for the login: the relay's description shows neither
        assertThat(relay.toString()).doesNotContain("s3cret").contains("db=jdbc:postgresql://db:5432/shop ");
        relay.close();
        assertThat(relay.role()).isEqualTo(CdcRelay.Role.STOPPED);
    }

    @Test
    void requiredSettingsAreNamed() {
        assertThatThrownBy(() -> CdcRelay.builder().user("u").bootstrapServers("k:9092").build())
                .hasMessage("jdbcUrl is required");
        assertThatThrownBy(() -> valid().user(null).build())
                .hasMessageStartingWith("user is required: set user(…), or put user=ROLE (and password=…) in jdbcUrl")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> valid().bootstrapServers(" ").build()).hasMessage("bootstrapServers is required");
        assertThatThrownBy(() -> valid().jdbcUrl("jdbc:mysql://db/shop").build())
                .hasMessageContaining("jdbcUrl must start with jdbc:postgresql:");
    }

    @Test
    void theUserAndPasswordMayComeFromTheUrlAsForThePollingRelay() {
        CdcRelay relay = CdcRelay.builder().jdbcUrl("jdbc:postgresql://db:5432/shop?user=relay&password=s3cret")
                .bootstrapServers("kafka:9092").build();
        assertThat(relay.toString()).doesNotContain("s3cret");
        relay.close();
    }

    @Test
    void instanceIdsFollowTheSameRuleAsThePollingRelays() {
        assertThatThrownBy(() -> valid().instanceId("has space").build())
                .hasMessageStartingWith("instanceId must be 1 to 200 printable ASCII characters without spaces");
        assertThatThrownBy(() -> valid().instanceId("caf\u00e9").build()).hasMessageStartingWith("instanceId must be");
    }

    @Test
    void identifiersAreValidatedBeforeTheyReachSql() {
        assertThatThrownBy(() -> valid().slotName("slot; drop table x").build())
                .hasMessageContaining("slotName 'slot; drop table x' is not a legal identifier");
        assertThatThrownBy(() -> valid().publicationName("Pub").build()).hasMessageContaining("publicationName 'Pub'");
        assertThatThrownBy(() -> valid().schema("select").build()).hasMessageContaining("schema 'select' is a reserved SQL word");
    }

    @Test
    void durationsAndSizesHaveBounds() {
        assertThatThrownBy(() -> valid().leaseDuration(Duration.ofMillis(500)).build())
                .hasMessage("leaseDuration must be between PT2S and PT10M, got PT0.5S");
        assertThatThrownBy(() -> valid().heartbeatInterval(null).build()).hasMessage("heartbeatInterval must not be null");
        assertThatThrownBy(() -> valid().offsetFlushInterval(Duration.ZERO).build()).hasMessageContaining("offsetFlushInterval");
        assertThatThrownBy(() -> valid().maxBatchSize(0).build()).hasMessage("maxBatchSize must be between 1 and 100000, got 0");
    }

    @Test
    void producerOverridesThatWeakenAGuaranteeAreRefused() {
        assertThatThrownBy(() -> valid().producerOverrides(Map.of("acks", "1")).build())
                .isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("acks");
        assertThat(valid().producerOverrides(Map.of("linger.ms", "20", "compression.type", "zstd")).build()).isNotNull();
    }

    @Test
    void aJdbcUrlWithSeveralHostsNeedsTargetServerTypePrimary() {
        assertThatThrownBy(() -> valid().jdbcUrl("jdbc:postgresql://a:5432,b:5432/shop").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names 2 hosts with no targetServerType")
                .hasMessageContaining("Add targetServerType=primary");
        assertThatThrownBy(() -> valid().jdbcUrl("jdbc:postgresql://a:5432,b:5432/shop?targetServerType=preferSecondary")
                .build()).hasMessageContaining("with targetServerType=preferSecondary");
        assertThat(valid().jdbcUrl("jdbc:postgresql://a:5432,b:5433/shop?targetServerType=primary").build()).isNotNull();
    }
}
