package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * What a report's {@code problem} may hold: the health detail, never a password or a JDBC URL, within the column's
 * 300 characters. (The reports themselves are written against PostgreSQL by both relays' tests.)
 */
class RelayReportsTest {

    @Test
    void theProblemIsTheDetailWithoutSecretsOrUrls() {
        assertThat(RelayReports.problem("Kafka not reachable: 127.0.0.1:9092")).isEqualTo("Kafka not reachable: 127.0.0.1:9092");
        assertThat(RelayReports.problem(null)).isEqualTo("not ready");
        assertThat(RelayReports.problem("cannot connect to jdbc:postgresql://db:5432/shop?user=relay&password=s3cret now"))
                .isEqualTo("cannot connect to [JDBC URL] now").doesNotContain("s3cret");
        assertThat(RelayReports.problem("login failed, password=s3cret")).doesNotContain("s3cret");
    }

    @Test
    void aLongProblemIsCutToTheColumnWithoutSplittingACharacter() {
        String cut = RelayReports.problem("x".repeat(298) + "\uD83D\uDE00" + "y".repeat(50));
        assertThat(cut).hasSizeLessThanOrEqualTo(RelayReports.PROBLEM_LIMIT).endsWith("x…");
        assertThat(RelayReports.problem("z".repeat(300))).hasSize(300);
        assertThat(RelayReports.problem("z".repeat(301))).hasSize(300).endsWith("…");
    }
}
