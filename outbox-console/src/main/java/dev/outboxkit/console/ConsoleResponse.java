package dev.outboxkit.console;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The console's answer: write the status, every header and the body as they are.
 *
 * @param status  the HTTP status
 * @param headers response headers (Content-Type, the security headers, Set-Cookie, Location, …)
 * @param body    the body bytes
 */
public record ConsoleResponse(int status, Map<String, String> headers, byte[] body) {

    public ConsoleResponse {
        headers = Map.copyOf(headers);
        body = body.clone();
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    /** The body as UTF-8 text. */
    public String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** The value of header {@code name} (exact case as the console writes it), or null. */
    public String header(String name) {
        return headers.get(name);
    }
}
