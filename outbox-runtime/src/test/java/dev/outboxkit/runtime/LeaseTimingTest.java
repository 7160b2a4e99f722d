package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.relay.RelayOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Each duration derived from the lease, at the default lease, at the option's bounds and where a clamp applies. */
class LeaseTimingTest {

    private static final LeaseTiming DEFAULT = new LeaseTiming(RelayOptions.LEASE_DURATION.defaultValue());
    private static final LeaseTiming SHORTEST = new LeaseTiming(Duration.ofSeconds(2));
    private static final LeaseTiming LONGEST = new LeaseTiming(Duration.ofMinutes(10));

    @Test
    void theDefaultLeaseOf15sGivesA5sAckBudgetAndRenewal() {
        assertThat(DEFAULT.lease()).isEqualTo(Duration.ofSeconds(15));
        assertThat(DEFAULT.renewInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(DEFAULT.ackBudget()).isEqualTo(Duration.ofSeconds(5));
        assertThat(DEFAULT.idleTransactionTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(DEFAULT.maxBlock()).isEqualTo(Duration.ofSeconds(5));
        assertThat(DEFAULT.databaseSilence()).isEqualTo(DatabaseSilence.LIMIT);
        assertThat(DEFAULT.stallAfter()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void renewalIsAThirdOfTheLeaseButNeverSpins() {
        assertThat(SHORTEST.renewInterval()).isEqualTo(Duration.ofMillis(666).plusNanos(666_666));
        assertThat(LONGEST.renewInterval()).isEqualTo(Duration.ofSeconds(200));
        assertThat(new LeaseTiming(Duration.ofMillis(150)).renewInterval()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void theHeartbeatIsTheRenewalAtMostASecondAndAReportLastsTheLeaseOrThreeHeartbeats() {
        assertThat(DEFAULT.heartbeatInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(SHORTEST.heartbeatInterval()).isEqualTo(SHORTEST.renewInterval());
        assertThat(DEFAULT.reportLifetime()).isEqualTo(DEFAULT.lease());
        assertThat(SHORTEST.reportLifetime()).isEqualTo(SHORTEST.lease());
        assertThat(new LeaseTiming(Duration.ofMillis(150)).reportLifetime()).isEqualTo(Duration.ofMillis(300));
    }

    @Test
    void ackBudgetIsAThirdOfTheLeaseAndEndsBeforeTheIdleTimeout() {
        for (LeaseTiming t : new LeaseTiming[] {SHORTEST, DEFAULT, LONGEST}) {
            assertThat(t.ackBudget()).isEqualTo(t.lease().dividedBy(3));
            assertThat(t.idleTransactionTimeout()).isEqualTo(t.lease());
            assertThat(t.ackBudget().multipliedBy(2)).isLessThan(t.idleTransactionTimeout());
        }
    }

    @Test
    void maxBlockIsTheAckBudgetBetween1And10Seconds() {
        assertThat(SHORTEST.maxBlock()).isEqualTo(Duration.ofSeconds(1));
        assertThat(new LeaseTiming(Duration.ofSeconds(3)).maxBlock()).isEqualTo(Duration.ofSeconds(1));
        assertThat(new LeaseTiming(Duration.ofSeconds(6)).maxBlock()).isEqualTo(Duration.ofSeconds(2));
        assertThat(new LeaseTiming(Duration.ofSeconds(30)).maxBlock()).isEqualTo(Duration.ofSeconds(10));
        assertThat(LONGEST.maxBlock()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void databaseSilenceIsTheSharedLimitOrAShorterLease() {
        assertThat(SHORTEST.databaseSilence()).isEqualTo(Duration.ofSeconds(2));
        assertThat(new LeaseTiming(DatabaseSilence.LIMIT).databaseSilence()).isEqualTo(DatabaseSilence.LIMIT);
        assertThat(LONGEST.databaseSilence()).isEqualTo(DatabaseSilence.LIMIT);
    }

    @Test
    void stallIsTwiceTheLeaseAtLeast10Seconds() {
        assertThat(SHORTEST.stallAfter()).isEqualTo(Duration.ofSeconds(10));
        assertThat(new LeaseTiming(Duration.ofSeconds(5)).stallAfter()).isEqualTo(Duration.ofSeconds(10));
        assertThat(new LeaseTiming(Duration.ofSeconds(6)).stallAfter()).isEqualTo(Duration.ofSeconds(12));
        assertThat(LONGEST.stallAfter()).isEqualTo(Duration.ofMinutes(20));
    }

    @Test
    void refusesALeaseThatIsNotPositive() {
        assertThatThrownBy(() -> new LeaseTiming(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("leaseDuration must be positive, got PT0S");
        assertThatThrownBy(() -> new LeaseTiming(null)).isInstanceOf(NullPointerException.class);
    }
}
