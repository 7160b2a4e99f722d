package dev.outboxkit.console.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpsExchange;
import dev.outboxkit.console.ConsoleRequest;
import dev.outboxkit.console.ConsoleResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Function;

/** Not API: serves the console on the JDK's {@code com.sun.net.httpserver} (the sidecar's HTTP server). */
public final class JdkHttpAdapter implements HttpHandler {

    /** Largest form body read: the console's forms are a few hundred bytes. */
    static final int MAX_BODY = 64 * 1024;

    private final Function<ConsoleRequest, ConsoleResponse> console;

    public JdkHttpAdapter(Function<ConsoleRequest, ConsoleResponse> console) {
        this.console = console;
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        try (ex) {
            Map<String, java.util.List<String>> form = Map.of();
            String type = ex.getRequestHeaders().getFirst("Content-Type");
            if (type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("application/x-www-form-urlencoded")) {
                byte[] body = readAtMost(ex.getRequestBody(), MAX_BODY + 1);
                if (body.length > MAX_BODY) {
                    byte[] msg = "form too large\n".getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
                    ex.sendResponseHeaders(413, msg.length);
                    ex.getResponseBody().write(msg);
                    return;
                }
                form = ConsoleRequest.parameters(new String(body, StandardCharsets.UTF_8));
            }
            ConsoleRequest request = new ConsoleRequest(ex.getRequestMethod(), ex.getRequestURI().getPath(),
                    ConsoleRequest.parameters(ex.getRequestURI().getRawQuery()), form, ex.getRequestHeaders(),
                    ex instanceof HttpsExchange, null);
            ConsoleResponse response = console.apply(request);
            response.headers().forEach((k, v) -> ex.getResponseHeaders().set(k, v));
            byte[] body = response.body();
            boolean noBody = body.length == 0 || request.method().equals("HEAD");
            ex.sendResponseHeaders(response.status(), noBody ? -1 : body.length);
            if (!noBody) {
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    private static byte[] readAtMost(InputStream in, int limit) throws IOException {
        return in.readNBytes(limit);
    }
}
