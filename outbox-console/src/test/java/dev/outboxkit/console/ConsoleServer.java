package dev.outboxkit.console;

import com.sun.net.httpserver.HttpServer;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.testkit.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;

/** A console on the JDK HTTP server (as the sidecar mounts it), on a free loopback port, over a test database. */
final class ConsoleServer implements AutoCloseable {

    static final String TOKEN = "test-operator-token-0123456789abcdef";
    static final String OPERATOR = "console-operator";

    final Console console;
    final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(4);

    ConsoleServer(TestDatabase db, UnaryOperator<Console.Builder> options) {
        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();
        console = options.apply(Console.builder().admin(admin)).build();
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(executor);
        server.createContext(console.basePath(), console.httpHandler());
        server.start();
    }

    /** The console's root, e.g. {@code http://127.0.0.1:40123/console}. */
    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + console.basePath();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        console.close();
    }
}
