package dev.outboxkit.writer.internal;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Not API: public for {@code dev.outboxkit.writer.IdempotencyKeys}.
 *
 * <p>Canonical JSON for request hashing: object members sorted by name (UTF-16 order), no
 * insignificant whitespace, numbers compared by value ({@code 1}, {@code 1.0} and {@code 1e0} are
 * the same), strings with JSON's minimal escaping. When a name repeats, the last member wins.
 */
public final class CanonicalJson {

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    private static final JsonFactory FACTORY = new JsonFactory();

    private CanonicalJson() {
    }

    /** Parses {@code json}; IllegalArgumentException saying why when it is not one JSON value. */
    public static JsonNode parse(String json) {
        if (json == null) {
            throw new IllegalArgumentException("request must not be null");
        }
        try {
            JsonNode node = MAPPER.readTree(json);
            if (node == null || node.isMissingNode()) {
                throw new IllegalArgumentException("request is empty; pass the request as one JSON value");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("request is not valid JSON (" + e.getOriginalMessage()
                    + "); pass a non-JSON request body as bytes to hash it as it is", e);
        }
    }

    /** The canonical text of {@code node}. */
    public static String canonical(JsonNode node) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        write(node, out);
        return out.toString(StandardCharsets.UTF_8);
    }

    /** SHA-256 of the canonical UTF-8 text of {@code node}. */
    public static byte[] sha256(JsonNode node) {
        MessageDigest digest = sha256();
        write(node, new DigestOutputStream(OutputStream.nullOutputStream(), digest));
        return digest.digest();
    }

    /** SHA-256 of {@code bytes} as they are. */
    public static byte[] sha256(byte[] bytes) {
        return sha256().digest(bytes);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }

    private static void write(JsonNode node, OutputStream out) {
        try (JsonGenerator g = FACTORY.createGenerator(out, JsonEncoding.UTF8)) {
            write(g, node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(JsonGenerator g, JsonNode node) throws IOException {
        switch (node.getNodeType()) {
            case OBJECT -> {
                List<String> names = new ArrayList<>(node.size());
                for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
                    names.add(it.next());
                }
                names.sort(null);
                g.writeStartObject();
                for (String name : names) {
                    g.writeFieldName(name);
                    write(g, node.get(name));
                }
                g.writeEndObject();
            }
            case ARRAY -> {
                g.writeStartArray();
                for (JsonNode element : node) {
                    write(g, element);
                }
                g.writeEndArray();
            }
            case STRING -> g.writeString(node.textValue());
            case NUMBER -> g.writeNumber(number(node));
            case BOOLEAN -> g.writeBoolean(node.booleanValue());
            case NULL -> g.writeNull();
            case BINARY -> g.writeString(node.asText());
            default -> throw new IllegalArgumentException("cannot canonicalise a JSON " + node.getNodeType() + " node");
        }
    }

    private static String number(JsonNode node) {
        BigDecimal value = node.isIntegralNumber() ? new BigDecimal(node.bigIntegerValue()) : node.decimalValue();
        return value.signum() == 0 ? "0" : value.stripTrailingZeros().toString();
    }
}
