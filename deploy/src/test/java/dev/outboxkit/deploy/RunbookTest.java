package dev.outboxkit.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/runbook.md has one section per shipped alert, in the rules' order, and each alert links to its own. */
class RunbookTest {

    @Test
    void everyAlertHasItsRunbookSection() throws Exception {
        List<String> alerts = new ArrayList<>();
        for (JsonNode group : new YAMLMapper().readTree(MonitoringTest.RULES.toFile()).path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                String name = rule.path("alert").asText();
                alerts.add(name);
                assertThat(rule.path("annotations").path("runbook").asText()).as(name)
                        .isEqualTo("docs/runbook.md#" + name.toLowerCase(Locale.ROOT));
                assertThat(rule.path("labels").path("severity").asText()).as(name).isIn("page", "ticket");
            }
        }
        List<String> sections = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^## (\\S+)$").matcher(Files.readString(Path.of("../docs/runbook.md")));
        while (m.find()) {
            sections.add(m.group(1));
        }
        assertThat(sections).isEqualTo(alerts);
        for (String section : sections) {
            String body = Files.readString(Path.of("../docs/runbook.md")).split("(?m)^## " + section + "$", 2)[1].split("(?m)^## ", 2)[0];
            assertThat(body).as(section).contains("**Means:**").contains("**`outbox status` shows:**").contains("**Act:**")
                    .contains("**Do not:**");
            assertThat(body.strip()).as("%s starts with the console page that shows it", section)
                    .startsWith("**Look first:**").contains("console");
        }
    }
}
