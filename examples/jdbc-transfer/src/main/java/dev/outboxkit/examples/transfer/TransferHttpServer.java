package dev.outboxkit.examples.transfer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.sql.Migrations;
import dev.outboxkit.writer.CommitOutcomeUnknownException;
import dev.outboxkit.writer.IdempotencyException;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.IdempotentResult;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import dev.outboxkit.writer.RequestInProgressException;
import dev.outboxkit.writer.StoredResponse;
import dev.outboxkit.writer.TerminalFailureException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tiny HTTP service (JDK {@link HttpServer}, no framework) that maps the {@code Idempotency-Key}
 * request header onto {@link IdempotencyKeys}, with the status codes of the IETF draft
 * "The Idempotency-Key HTTP Header Field":
 *
 * <table>
 *   <caption>responses of POST /transfers</caption>
 *   <tr><th>situation</th><th>status</th></tr>
 *   <tr><td>transfer made (first request with the key)</td><td>201, {@code Location}</td></tr>
 *   <tr><td>retry of a finished request</td><td>its stored response, plus {@code Idempotent-Replayed: true}</td></tr>
 *   <tr><td>no {@code Idempotency-Key} header</td><td>400</td></tr>
 *   <tr><td>the same key is still being processed</td><td>409, {@code Retry-After}</td></tr>
 *   <tr><td>the key was used with a different body</td><td>422</td></tr>
 *   <tr><td>late retry after the key was purged (not in the draft)</td><td>410</td></tr>
 *   <tr><td>unknown account / insufficient funds (stored, replayed)</td><td>404 / 402</td></tr>
 *   <tr><td>connection lost during commit: outcome unknown</td><td>503, {@code Retry-After}: retry with the same key</td></tr>
 * </table>
 *
 * <p>Request body: {@code {"from": "alice", "to": "bob", "amount": 10}}. A transfer updates two
 * rows of {@code example_account} and writes one outbox event, all in the transaction that also
 * completes the key. Run it: {@code TransferHttpServer <jdbc-url> <user> <password> [port]}.
 */
public final class TransferHttpServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TransferHttpServer.class);

    public static final String SCOPE = "transfers";
    public static final String PATH = "/transfers";
    public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    public static final String REPLAYED = "Idempotent-Replayed";
    /** The example's business table (in the connection's default schema). */
    public static final String ACCOUNTS_DDL = "CREATE TABLE IF NOT EXISTS example_account "
            + "(id text PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0))";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService executor;
    private final DataSource dataSource;
    private final IdempotencyKeys keys;

    private TransferHttpServer(HttpServer server, DataSource dataSource, IdempotencyKeys keys) {
        this.server = server;
        this.dataSource = dataSource;
        this.keys = keys;
        this.executor = Executors.newFixedThreadPool(16);
        server.setExecutor(executor);
        server.createContext(PATH, this::handle);
    }

    /** Starts serving on {@code port} (0: any free port) of the loopback interface. */
    public static TransferHttpServer start(DataSource dataSource, IdempotencyKeys keys, int port) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        TransferHttpServer s = new TransferHttpServer(http, dataSource, keys);
        http.start();
        return s;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Creates the example table if needed and opens (or resets) an account. */
    public static void openAccount(DataSource dataSource, String id, long balance) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(ACCOUNTS_DDL);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO example_account (id, balance) VALUES (?, ?) "
                    + "ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance")) {
                ps.setString(1, id);
                ps.setLong(2, balance);
                ps.executeUpdate();
            }
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!exchange.getRequestMethod().equals("POST")) {
                exchange.getResponseHeaders().add("Allow", "POST");
                send(exchange, problem(405, "use POST"), Map.of());
                return;
            }
            String key = exchange.getRequestHeaders().getFirst(IDEMPOTENCY_KEY);
            if (key == null || key.isBlank()) {
                send(exchange, problem(400, "the Idempotency-Key header is missing: send a unique key (e.g. a UUID) "
                        + "with every transfer and reuse it when you retry"), Map.of());
                return;
            }
            JsonNode body;
            try (InputStream in = exchange.getRequestBody()) {
                body = JSON.readTree(in.readAllBytes());
            } catch (IOException e) {
                send(exchange, problem(400, "the body is not JSON"), Map.of());
                return;
            }
            Transfer transfer;
            try {
                transfer = Transfer.of(body);
            } catch (IllegalArgumentException e) {
                send(exchange, problem(400, e.getMessage()), Map.of());
                return;
            }
            String traceparent = exchange.getRequestHeaders().getFirst("traceparent");
            send(exchange, transfer, key, body, traceparent);
        } catch (RuntimeException e) {
            log.error("unexpected failure in {}", PATH, e);
        }
    }

    private void send(HttpExchange exchange, Transfer transfer, String key, JsonNode body, String traceparent)
            throws IOException {
        try {
            IdempotentResult result = keys.execute(dataSource, SCOPE, key, body,
                    (c, tx) -> transfer(c, tx, transfer, traceparent));
            send(exchange, result.response(), result.replayed() ? Map.of(REPLAYED, "true") : Map.of());
        } catch (IllegalArgumentException e) {
            send(exchange, problem(400, e.getMessage()), Map.of());
        } catch (IdempotencyException e) {
            // 409 (+ Retry-After), 422 or 410: the status each refusal carries
            send(exchange, problem(e.httpStatus(), e.getMessage()), e instanceof RequestInProgressException inProgress
                    ? Map.of("Retry-After", Long.toString(inProgress.retryAfter().toSeconds())) : Map.of());
        } catch (CommitOutcomeUnknownException e) {
            send(exchange, problem(503, "the outcome is unknown (the database connection failed during commit); retry "
                    + "with the same Idempotency-Key"), Map.of("Retry-After", "1"));
        } catch (SQLException | RuntimeException e) {
            log.warn("transfer with key {} failed; the key was released, a retry may run it", key, e);
            send(exchange, problem(500, "the transfer failed and was not made; retry with the same Idempotency-Key"), Map.of());
        }
    }

    /** The business transaction: runs in the transaction that also completes the key. */
    private static StoredResponse transfer(Connection c, OutboxTransaction tx, Transfer t, String traceparent)
            throws SQLException {
        Map<String, Long> balances = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id, balance FROM example_account WHERE id IN (?, ?) ORDER BY id FOR UPDATE")) {
            ps.setString(1, t.from());
            ps.setString(2, t.to());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    balances.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        for (String account : new String[] {t.from(), t.to()}) {
            if (!balances.containsKey(account)) {
                throw new TerminalFailureException(problem(404, "no account '" + account + "'"));
            }
        }
        if (balances.get(t.from()) < t.amount()) {
            throw new TerminalFailureException(problem(402, "insufficient funds in '" + t.from() + "'"));
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE example_account SET balance = balance + ? WHERE id = ?")) {
            ps.setLong(1, -t.amount());
            ps.setString(2, t.from());
            ps.addBatch();
            ps.setLong(1, t.amount());
            ps.setString(2, t.to());
            ps.addBatch();
            ps.executeBatch();
        }
        UUID transferId = EventIds.next();
        ObjectNode made = JSON.createObjectNode().put("transferId", transferId.toString()).put("from", t.from())
                .put("to", t.to()).put("amount", t.amount());
        tx.add(message(t.from(), made, traceparent));
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/json");
        headers.put("Location", PATH + "/" + transferId);
        return new StoredResponse(201, headers, made.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static OutboxMessage message(String account, ObjectNode payload, String traceparent) {
        OutboxMessage.Builder b = OutboxMessage.builder("account", account, "TransferMade").payload(payload);
        try {
            return b.traceparent(traceparent).build();
        } catch (InvalidEventException badTraceparent) {
            // W3C: an invalid traceparent is ignored, not an error
            return b.traceparent(null).build();
        }
    }

    private static StoredResponse problem(int status, String detail) {
        ObjectNode p = JSON.createObjectNode().put("status", status).put("detail", detail);
        return new StoredResponse(status, Map.of("Content-Type", "application/problem+json"),
                p.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange exchange, StoredResponse response, Map<String, String> extra) throws IOException {
        response.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
        extra.forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
        byte[] body = response.body();
        exchange.sendResponseHeaders(response.status(), body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** The request: move {@code amount} from one account to another. */
    record Transfer(String from, String to, long amount) {
        static Transfer of(JsonNode body) {
            if (body == null || !body.isObject()) {
                throw new IllegalArgumentException("the body must be a JSON object {\"from\", \"to\", \"amount\"}");
            }
            String from = body.path("from").asText("");
            String to = body.path("to").asText("");
            if (from.isBlank() || to.isBlank() || from.equals(to)) {
                throw new IllegalArgumentException("\"from\" and \"to\" must name two different accounts");
            }
            if (!body.path("amount").canConvertToLong() || body.path("amount").asLong() <= 0) {
                throw new IllegalArgumentException("\"amount\" must be a positive whole number");
            }
            return new Transfer(from, to, body.path("amount").asLong());
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    /**
     * {@code TransferHttpServer <jdbc-url> <user> <password> [port]}: applies the outboxkit schema, opens
     * the accounts alice and bob with 1000 each, and serves until killed.
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: TransferHttpServer <jdbc-url> <user> <password> [port]");
            System.exit(2);
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(args[0]);
        ds.setUser(args[1]);
        ds.setPassword(args[2]);
        // the outboxkit tables (outbox_event, idempotency_key, ...) in the default schema; idempotent
        Migrations.migrate(ds, Migrations.DEFAULT_SCHEMA);
        openAccount(ds, "alice", 1000);
        openAccount(ds, "bob", 1000);
        TransferHttpServer s = start(ds, IdempotencyKeys.builder().build(), args.length > 3 ? Integer.parseInt(args[3]) : 8080);
        System.out.println("POST http://127.0.0.1:" + s.port() + PATH + " with an Idempotency-Key header");
    }
}
