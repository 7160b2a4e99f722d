package dev.outboxkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The IDE hints for {@code outboxkit.relay.options.*} are the library's option definitions: same names, docs and
 * defaults. When a definition changes, the failure message holds the hint values to paste into
 * {@code META-INF/additional-spring-configuration-metadata.json}.
 */
class RelayOptionsMetadataTest {

    @Test
    void theOptionHintsAreTheRelaysOptionDefinitions() throws Exception {
        Map<String, String> expected = new LinkedHashMap<>();
        add(expected, "Both relays", RelayOptions.all());
        add(expected, "poll", PollingRelay.builder().options().subList(RelayOptions.all().size(), PollingRelay.builder().options().size()));
        add(expected, "cdc", CdcRelay.builder().options().subList(RelayOptions.all().size(), CdcRelay.builder().options().size()));

        JsonNode metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/additional-spring-configuration-metadata.json")) {
            metadata = new ObjectMapper().readTree(in);
        }
        Map<String, String> actual = new LinkedHashMap<>();
        for (JsonNode hint : metadata.get("hints")) {
            if (hint.get("name").asText().equals("outboxkit.relay.options.keys")) {
                hint.get("values").forEach(v -> actual.put(v.get("value").asText(), v.get("description").asText()));
            }
        }
        ObjectMapper json = new ObjectMapper();
        StringBuilder paste = new StringBuilder();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            paste.append("        {\"value\": ").append(json.writeValueAsString(e.getKey())).append(", \"description\": ")
                    .append(json.writeValueAsString(e.getValue())).append("},\n");
        }
        assertThat(actual).as("hint values to paste:%n%s", paste).containsExactlyEntriesOf(expected);
    }

    private static void add(Map<String, String> out, String relays, List<RelayOption<?>> options) {
        for (RelayOption<?> o : options) {
            if (o == RelayOptions.SCHEMA) {
                continue; // outboxkit.schema, shared with the writer and the inbox
            }
            String def = o.defaultText().isEmpty() ? "" : " Default: " + o.defaultText() + ".";
            out.put(o.kebabName(), relays + ": " + o.description() + def);
        }
    }
}
