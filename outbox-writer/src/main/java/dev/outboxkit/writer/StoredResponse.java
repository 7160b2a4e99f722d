package dev.outboxkit.writer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The outcome of an idempotent request as it is stored and replayed to retries: status, headers
 * and body. Immutable (the body is copied in and out).
 *
 * @param status  HTTP-style status, 100 to 599
 * @param headers response headers to replay (empty when none)
 * @param body    response body (empty when none)
 */
public record StoredResponse(int status, Map<String, String> headers, byte[] body) {

    public StoredResponse {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("status must be an HTTP status from 100 to 599, got " + status);
        }
        Map<String, String> copy = new LinkedHashMap<>();
        if (headers != null) {
            headers.forEach((name, value) -> {
                if (name == null || name.isBlank()) {
                    throw new IllegalArgumentException("response header names must not be blank");
                }
                if (value == null) {
                    throw new IllegalArgumentException("response header '" + name + "' has no value; leave it out instead");
                }
                copy.put(name, value);
            });
        }
        headers = Collections.unmodifiableMap(copy);
        body = body == null ? new byte[0] : body.clone();
    }

    /** A response with a UTF-8 text body and no headers. */
    public static StoredResponse of(int status, String body) {
        return new StoredResponse(status, Map.of(), body == null ? null : body.getBytes(StandardCharsets.UTF_8));
    }

    /** A response with a JSON body and {@code Content-Type: application/json}. */
    public static StoredResponse json(int status, String json) {
        return new StoredResponse(status, Map.of("Content-Type", "application/json"), json.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    /** The body decoded as UTF-8. */
    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredResponse r && r.status == status && r.headers.equals(headers) && Arrays.equals(r.body, body);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * status + headers.hashCode()) + Arrays.hashCode(body);
    }

    /** Status and sizes only: bodies may be sensitive. */
    @Override
    public String toString() {
        return "StoredResponse[status=" + status + ", headers=" + headers.keySet() + ", body=" + body.length + " bytes]";
    }
}
