package dev.outboxkit.benchmarks.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.benchmarks.Metric;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatTest {

    @Test
    void medianAndSpreadOfOddAndEvenCounts() {
        assertThat(Stat.of(List.of(3.0, 1.0, 2.0))).extracting(Stat::median, Stat::min, Stat::max)
                .containsExactly(2.0, 1.0, 3.0);
        assertThat(Stat.of(List.of(4.0, 1.0, 2.0, 3.0)).median()).isEqualTo(2.5);
        assertThat(Stat.of(List.of(4.0, 1.0)).samples()).containsExactly(4.0, 1.0);
    }

    @Test
    void verdictsJudgeTheMedian() {
        Metric floor = Metric.of("x_eps", "events/s", "x").atLeast(100);
        Metric ceiling = Metric.of("x_ms", "ms", "x").atMost(10);
        assertThat(new Row(floor, Stat.of(List.of(90.0, 110.0, 120.0)), null).verdict()).isEqualTo(Row.Verdict.PASS);
        assertThat(new Row(floor, Stat.of(List.of(90.0, 95.0, 120.0)), null).verdict()).isEqualTo(Row.Verdict.FAIL);
        assertThat(new Row(ceiling, Stat.of(List.of(10.0)), null).verdict()).isEqualTo(Row.Verdict.PASS);
        assertThat(new Row(ceiling, null, "pending").verdict()).isEqualTo(Row.Verdict.MISSING);
        assertThat(new Row(Metric.of("y", "ratio", "y"), Stat.of(List.of(1.0)), null).verdict())
                .isEqualTo(Row.Verdict.NO_TARGET);
    }

    @Test
    void aHeadlineTargetAlsoNeedsEveryRepeatWithinTenPercentOfTheMedian() {
        Metric headline = Metric.of("x", "ratio", "x").atMost(1.5).headline();
        assertThat(headline.target()).hasToString("≤ 1.50, each repeat within 10 %");
        assertThat(new Row(headline, Stat.of(List.of(1.0, 1.05, 0.95)), null).verdict()).isEqualTo(Row.Verdict.PASS);
        assertThat(new Row(headline, Stat.of(List.of(1.0, 1.2, 0.95)), null).verdict())
                .isEqualTo(Row.Verdict.UNSTEADY);
        assertThat(new Row(headline, Stat.of(List.of(1.6, 1.6, 2.0)), null).verdict()).isEqualTo(Row.Verdict.FAIL);
        assertThatThrownBy(() -> Metric.of("y", "ratio", "y").headline()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("a headline figure needs a target");
    }

    @Test
    void payloadVariantsGetASuffixAndNoTarget() {
        Metric m = Metric.of("pg_drain_ceiling_eps", "events/s", "x").atLeast(5);
        assertThat(m.forPayload(200)).isSameAs(m);
        assertThat(m.forPayload(1024).key()).isEqualTo("pg_drain_ceiling_eps_1kb");
        assertThat(m.forPayload(1024).target()).isNull();
    }
}
