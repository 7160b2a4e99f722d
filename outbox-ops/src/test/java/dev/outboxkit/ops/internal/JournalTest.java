package dev.outboxkit.ops.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The journal's detail stays bounded whatever a caller hands it (the writers are tested against PostgreSQL elsewhere). */
class JournalTest {

    @Test
    void listsAreCutToTwentyAndStringsToThreeHundredCharacters() {
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("findings", IntStream.range(0, 50).mapToObj(i -> Map.of("n", i)).toList());
        detail.put("note", "x".repeat(1_000));
        Map<String, Object> back = Journal.parse(Journal.json(detail));
        assertThat((List<?>) back.get("findings")).hasSize(Journal.MAX_LISTED).first().isEqualTo(Map.of("n", 0));
        assertThat((String) back.get("note")).hasSize(Journal.MAX_STRING).endsWith("…");
    }

    @Test
    void aDetailLargerThanSixteenKibKeepsItsScalarsAndSaysItWasTruncated() {
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("count", 7);
        List<Object> big = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            big.add(Map.of("detail", "y".repeat(299), "more", "z".repeat(299), "again", "w".repeat(299)));
        }
        detail.put("findings", big);
        String json = Journal.json(detail);
        assertThat(json.length()).isLessThanOrEqualTo(Journal.MAX_DETAIL);
        assertThat(Journal.parse(json)).containsEntry("count", 7).containsEntry("truncated", true).doesNotContainKey("findings");
    }

    @Test
    void aFailureKeepsTheFirstLineOfItsMessageWithPasswordsMasked() {
        SQLException e = new SQLException("could not reach jdbc:postgresql://db/app?password=s3cret\n  Detail: Failing row contains (secret)",
                "08001");
        Map<String, Object> d = Journal.failure(e);
        assertThat(d).containsEntry("error", "java.sql.SQLException").containsEntry("sqlState", "08001");
        assertThat((String) d.get("message")).doesNotContain("s3cret").doesNotContain("Failing row");
        assertThat(Journal.failureSummary("retention", e)).startsWith("retention failed: SQLException: could not reach")
                .doesNotContain("s3cret").doesNotContain("Failing row");
    }
}
