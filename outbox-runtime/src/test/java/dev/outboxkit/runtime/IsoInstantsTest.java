package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The one ISO-8601 instant parser of the CDC relay ({@code created_at}) and the consumer ({@code createdAt}). */
class IsoInstantsTest {

    @ParameterizedTest
    @ValueSource(strings = {"2024-05-06T07:08:09.123456Z", "2024-05-06T07:08:09Z", "2024-05-06T07:08:09.1Z",
            "2024-05-06T07:08:09.123456789Z", "1999-12-31T23:59:59.999999-05:30", "2024-02-29T00:00:00.000001+14:00",
            "1970-01-01T00:00:00Z", "2024-05-06T07:08:09.12+02:00"})
    void timestampsKeepEveryDigitAndAgreeWithJavaTime(String text) {
        assertThat(IsoInstants.parse(text)).isEqualTo(OffsetDateTime.parse(text).toInstant());
    }

    @Test
    void unusualTimestampShapesFallBackToJavaTime() {
        assertThat(IsoInstants.parse("+12024-05-06T07:08:09Z")).isEqualTo(OffsetDateTime.parse("+12024-05-06T07:08:09Z").toInstant());
        // the fast path's shape but no such day
        assertThatThrownBy(() -> IsoInstants.parse("2024-02-30T00:00:00Z")).isExactlyInstanceOf(DateTimeParseException.class)
                .hasMessage("not a date: 2024-02-30T00:00:00Z")
                .hasCauseExactlyInstanceOf(DateTimeException.class)
                .satisfies(e -> assertThat(((DateTimeParseException) e).getParsedString()).isEqualTo("2024-02-30T00:00:00Z"));
        // not the fast path's shape: java.time's own refusal
        assertThatThrownBy(() -> IsoInstants.parse("yesterday")).isExactlyInstanceOf(DateTimeParseException.class)
                .hasMessage("Text 'yesterday' could not be parsed at index 0");
    }

    @Test
    void aLeapSecondAsRfc3339AllowsIt() {
        assertThat(IsoInstants.parse("2016-12-31T23:59:60Z")).isEqualTo(Instant.parse("2016-12-31T23:59:60Z"));
    }
}
