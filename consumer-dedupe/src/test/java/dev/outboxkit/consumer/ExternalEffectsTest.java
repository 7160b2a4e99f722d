package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.consumer.ExternalEffects.ClaimStatus;
import dev.outboxkit.consumer.ExternalEffects.State;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.FencedException;
import dev.outboxkit.testkit.ManualClock;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class ExternalEffectsTest {

    private static final Duration LEASE = Duration.ofMinutes(5);

    @Test
    void claimDoRecordAndARepeatIsToldInsteadOfDoingItAgain(TestDatabase db) throws Exception {
        ManualClock clock = ManualClock.startingAt(Instant.now().truncatedTo(ChronoUnit.MICROS));
        ExternalEffects effects = ExternalEffects.create(db.dataSource(), "public", clock, "consumer-a");
        UUID event = EventIds.next();
        List<String> keysSent = new ArrayList<>();

        ExternalEffects.Claim first = effects.perform("welcome-mail", event, LEASE, key -> {
            keysSent.add(key);
            return "mail-4711";
        });
        assertThat(first.status()).isEqualTo(ClaimStatus.SUCCEEDED);
        ExternalEffects.Claim again = effects.perform("welcome-mail", event, LEASE, key -> {
            keysSent.add(key);
            return "mail-4712";
        });
        assertThat(again.status()).isEqualTo(ClaimStatus.SUCCEEDED);
        assertThat(again.outcome()).isEqualTo("mail-4711");
        assertThat(keysSent).as("performed once, with the event id as the idempotency key").containsExactly(event.toString());
        // another effect of the same event is claimed on its own
        assertThat(effects.claim("partner-call", event, LEASE).acquired()).isTrue();
    }

    @Test
    void aTimeoutStaysUnknownForReconciliationAndIsNeverGuessed(TestDatabase db) throws Exception {
        ManualClock clock = ManualClock.startingAt(Instant.now().truncatedTo(ChronoUnit.MICROS));
        ExternalEffects effects = ExternalEffects.create(db.dataSource(), "public", clock, "consumer-a");
        UUID timedOut = EventIds.next();
        UUID crashed = EventIds.next();
        UUID refused = EventIds.next();

        ExternalEffects.Claim t = effects.perform("charge", timedOut, LEASE, key -> {
            throw new SocketTimeoutException("read timed out");
        });
        assertThat(t.status()).isEqualTo(ClaimStatus.UNKNOWN);
        assertThat(t.error()).contains("read timed out");
        ExternalEffects.Claim r = effects.perform("charge", refused, LEASE, key -> {
            throw new ExternalEffects.RejectedException("card declined");
        });
        assertThat(r.status()).isEqualTo(ClaimStatus.FAILED);
        // a holder that dies mid-call records nothing: in progress until the lease passes
        assertThat(effects.claim("charge", crashed, LEASE).acquired()).isTrue();
        assertThat(effects.claim("charge", crashed, LEASE).status()).isEqualTo(ClaimStatus.IN_PROGRESS);
        assertThat(effects.listUnknown(10)).extracting(ExternalEffects.Entry::eventId).containsExactly(timedOut);

        clock.advance(LEASE.plusSeconds(1));
        assertThat(effects.claim("charge", crashed, LEASE).status()).isEqualTo(ClaimStatus.UNKNOWN);
        assertThat(effects.listUnknown(10)).extracting(ExternalEffects.Entry::eventId)
                .containsExactlyInAnyOrder(timedOut, crashed);
        assertThat(effects.perform("charge", timedOut, LEASE, key -> {
            throw new AssertionError("an unknown outcome must not be performed again by perform()");
        }).status()).isEqualTo(ClaimStatus.UNKNOWN);

        // reconciliation asked the partner with the key: it did charge
        effects.resolve("charge", timedOut, State.SUCCEEDED, "partner-ref-9");
        assertThat(effects.claim("charge", timedOut, LEASE).status()).isEqualTo(ClaimStatus.SUCCEEDED);
        assertThat(effects.listUnknown(10)).extracting(ExternalEffects.Entry::eventId).containsExactly(crashed);
    }

    @Test
    void aTakeoverFencesTheStaleHoldersOutcome(TestDatabase db) throws Exception {
        ManualClock clock = ManualClock.startingAt(Instant.now().truncatedTo(ChronoUnit.MICROS));
        ExternalEffects a = ExternalEffects.create(db.dataSource(), "public", clock, "consumer-a");
        ExternalEffects b = ExternalEffects.create(db.dataSource(), "public", clock, "consumer-b");
        UUID event = EventIds.next();
        ExternalEffects.Claim stale = a.claim("sms", event, LEASE);
        assertThat(stale.acquired()).isTrue();
        assertThat(b.reclaim("sms", event, LEASE).status()).as("lease still running").isEqualTo(ClaimStatus.IN_PROGRESS);

        clock.advance(LEASE.plusSeconds(1));
        ExternalEffects.Claim taken = b.reclaim("sms", event, LEASE);
        assertThat(taken.acquired()).isTrue();
        assertThat(taken.attempt()).isEqualTo(2);
        assertThat(taken.idempotencyKey()).isEqualTo(stale.idempotencyKey());
        assertThatThrownBy(() -> a.complete(stale, "sent late")).isInstanceOf(FencedException.class)
                .hasMessageContaining("attempt 1");
        b.complete(taken, "sent");
        ExternalEffects.Entry row = a.find("sms", event);
        assertThat(row.state()).isEqualTo(State.SUCCEEDED);
        assertThat(row.outcome()).isEqualTo("sent");
        assertThat(row.holder()).isEqualTo("consumer-b");
    }

    @Test
    void notPerformedReleasesTheClaimSoALaterTryCanClaimIt(TestDatabase db) throws Exception {
        ExternalEffects effects = ExternalEffects.create(db.dataSource(), "public");
        UUID event = EventIds.next();
        assertThatThrownBy(() -> effects.perform("webhook", event, LEASE, key -> {
            throw new ExternalEffects.NotPerformedException("connection refused before sending", null);
        })).isInstanceOf(ExternalEffects.NotPerformedException.class);
        assertThat(effects.find("webhook", event)).isNull();
        assertThat(effects.perform("webhook", event, LEASE, key -> "200 OK").status()).isEqualTo(ClaimStatus.SUCCEEDED);
    }
}
