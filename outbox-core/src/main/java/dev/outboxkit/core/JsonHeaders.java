package dev.outboxkit.core;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reads the {@code headers} jsonb column into an ordered string map. */
final class JsonHeaders {

    private static final JsonFactory FACTORY = new JsonFactory();
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private JsonHeaders() {
    }

    /**
     * Top-level entries in document order. String values are taken as they are; any other JSON
     * value becomes its compact JSON text, so nothing in the column is lost.
     */
    static Map<String, String> parse(String json) {
        if (json == null || json.isEmpty() || json.equals("{}")) {
            return Map.of();
        }
        try (JsonParser p = FACTORY.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new InvalidEventException("headers must be a JSON object, got: " + abbreviate(json));
            }
            Map<String, String> out = new LinkedHashMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (value == JsonToken.VALUE_STRING) {
                    out.put(name, p.getText());
                } else {
                    out.put(name, MAPPER.writeValueAsString(MAPPER.readTree(p)));
                }
            }
            return Collections.unmodifiableMap(out);
        } catch (IOException e) {
            throw new InvalidEventException("headers are not valid JSON: " + e.getMessage(), e);
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 60 ? s : s.substring(0, 60) + "…";
    }
}
