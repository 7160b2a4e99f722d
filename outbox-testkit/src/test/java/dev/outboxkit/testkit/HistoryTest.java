package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class HistoryTest {

    private final UUID a1 = UUID.randomUUID();
    private final UUID a2 = UUID.randomUUID();
    private final UUID b1 = UUID.randomUUID();

    @Test
    void aCleanRunWithRedeliveriesIsOk() {
        History h = new History();
        h.committed(a1, "a", 1);
        h.committed(a2, "a", 2);
        h.committed(b1, "b", 1);
        h.delivered(a1);
        h.delivered(a1);
        h.delivered(a2);
        h.delivered(b1);
        h.applied(b1, "b");
        h.applied(a1, "a");
        h.applied(a2, "a");
        History.Report r = h.check();
        assertThat(r.ok()).as(r.summary()).isTrue();
        assertThat(r.duplicateDeliveries()).isEqualTo(1);
        assertThat(r.deliveries()).isEqualTo(4);
    }

    @Test
    void findsLostUnexpectedDuplicateEffectsAndReordering() {
        History h = new History();
        h.committed(a1, "a", 1);
        h.committed(a2, "a", 2);
        h.committed(b1, "b", 1);
        UUID ghost = UUID.randomUUID();
        UUID rolledBack = UUID.randomUUID();
        h.rolledBack(rolledBack);
        h.applied(a2, "a");
        h.applied(a1, "a");
        h.applied(a1, "a");
        h.applied(ghost, "a");
        h.applied(rolledBack, "c");
        History.Report r = h.check();
        assertThat(r.ok()).isFalse();
        assertThat(r.lost()).isEqualTo(1);
        assertThat(r.lostSample()).containsExactly(b1);
        assertThat(r.unexpected()).isEqualTo(2);
        assertThat(r.duplicateEffects()).isEqualTo(1);
        assertThat(r.orderViolations()).isEqualTo(1);
    }

    @Test
    void inDoubtIntentsAreNeitherLostNorUnexpected() {
        History h = new History();
        UUID maybe = UUID.randomUUID();
        UUID maybeNot = UUID.randomUUID();
        h.inDoubt(maybe, "a", 1);
        h.inDoubt(maybeNot, "a", 2);
        h.applied(maybe, "a");
        History.Report r = h.check();
        assertThat(r.ok()).isTrue();
        assertThat(r.inDoubt()).isEqualTo(2);
        assertThat(r.inDoubtApplied()).isEqualTo(1);
    }

    @Test
    void aLaterEventFirstPublishedBeforeAnEarlierOneIsAPublicationOrderViolation() {
        History h = new History();
        h.committed(a1, "a", 1);
        h.committed(a2, "a", 2);
        h.committed(b1, "b", 1);
        // partition order: a2 first published before a1; a1's duplicate after a2 does not count again
        h.delivered(a2, "a");
        h.delivered(b1, "b");
        h.delivered(a1, "a");
        h.delivered(a2, "a");
        // the consumer's first applications happen to be in order (e.g. a different consumer)
        h.applied(a1, "a");
        h.applied(a2, "a");
        h.applied(b1, "b");
        History.Report r = h.check();
        assertThat(r.ok()).as(r.summary()).isFalse();
        assertThat(r.orderViolations()).isZero();
        assertThat(r.publicationOrderViolations()).isEqualTo(1);
        assertThat(r.duplicateDeliveries()).isEqualTo(1);
        assertThat(r.summary()).contains("publicationOrderViolations=1");
    }

    @Test
    void aDuplicateOfAnEarlierEventAfterALaterOneKeepsPublicationOrder() {
        History h = new History();
        h.committed(a1, "a", 1);
        h.committed(a2, "a", 2);
        h.delivered(a1, "a");
        h.delivered(a2, "a");
        h.delivered(a1, "a"); // a retry after a crash appends a copy: allowed (G2)
        h.applied(a1, "a");
        h.applied(a2, "a");
        History.Report r = h.check();
        assertThat(r.ok()).as(r.summary()).isTrue();
        assertThat(r.publicationOrderViolations()).isZero();
    }
}
