package dev.outboxkit.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.outboxkit.console.Console;
import dev.outboxkit.relay.Relay;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * {@code /health/live}, {@code /health/ready} and {@code /metrics} (Prometheus text) for a sidecar, and the operator
 * console under its base path when one is given.
 */
final class SidecarServer implements AutoCloseable {

    static {
        // Without TCP_NODELAY the JDK server's separate header and body writes wait for the client's delayed ACK:
        // about 40 ms added to every response (the console's pages and assets).
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private final HttpServer server;

    /** @param console served under its base path; null: no console */
    SidecarServer(int port, Supplier<Relay.Health> health, PrometheusMeterRegistry registry, Console console) {
        try {
            server = HttpServer.create(new InetSocketAddress(port), 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on --http-port " + port + ": " + e.getMessage(), e);
        }
        // With the console, a few threads: a page waiting for the database must not hold up a health probe.
        server.setExecutor(Executors.newFixedThreadPool(console == null ? 1 : 4, r -> {
            Thread t = new Thread(r, "outbox-http");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/health/live", ex -> {
            Relay.Health h = health.get();
            respond(ex, h.live() ? 200 : 503, "text/plain", (h.live() ? "live" : "not live") + ": " + h.detail() + "\n");
        });
        server.createContext("/health/ready", ex -> {
            Relay.Health h = health.get();
            respond(ex, h.ready() ? 200 : 503, "text/plain", (h.ready() ? "ready" : "not ready") + ": " + h.detail() + "\n");
        });
        server.createContext("/metrics", ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        if (console != null) {
            server.createContext(console.basePath(), console.httpHandler());
        }
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
