package dev.outboxkit.writer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.GrantsOnce;
import dev.outboxkit.core.spi.RecordLimits;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.core.spi.TraceContext;
import dev.outboxkit.writer.internal.EventStatements;
import dev.outboxkit.writer.internal.JsonChecks;
import dev.outboxkit.writer.internal.PreparedEvent;
import dev.outboxkit.writer.internal.WriteFailures;
import dev.outboxkit.writer.internal.WriterMetrics;
import dev.outboxkit.writer.spi.RoundTrip;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes outbox events inside the caller's JDBC transaction, so they commit together with the
 * business change or not at all. Immutable and thread-safe: build one and share it.
 *
 * <p>Three ways to use it, all on a plain {@link Connection} (HikariCP, Spring, jOOQ, JDBI:
 * anything that hands out the connection):
 * <ul>
 *   <li>{@link #write(Connection, Collection)}: in a transaction you run and commit yourself.
 *       The events cost one round trip (for up to {@value #EVENTS_PER_ROUND_TRIP} events).</li>
 *   <li>{@link #begin(Connection)}: buffer events with {@link OutboxTransaction#add} and let
 *       {@link OutboxTransaction#commit()} send them <em>and</em> the COMMIT in one round trip:
 *       the outbox then adds no round trip to the transaction at all.</li>
 *   <li>{@link #inTransaction(DataSource, TransactionWork)}: the writer opens, runs and commits
 *       the transaction for you, the same way.</li>
 * </ul>
 *
 * <pre>{@code
 * OutboxWriter writer = OutboxWriter.builder().schema("public").build();
 * writer.inTransaction(dataSource, (c, tx) -> {
 *     debit(c, from, amount);
 *     credit(c, to, amount);
 *     tx.add(OutboxMessage.builder("account", from, "MoneySent").payload(sent).build());
 *     return null;
 * });
 * }</pre>
 *
 * <p>Bad input never reaches the database: events are validated when built and when added (see
 * {@link OutboxMessage}), a connection with autocommit on is refused
 * ({@link AutoCommitEnabledException}), a payload over {@link Builder#maxPayloadBytes(int)} is
 * refused ({@link PayloadTooLargeException}).
 *
 * <p>Grants are checked once per writer, on the first connection it is given (one round trip, then never again):
 * a role that lacks a privilege its mode needs gets a {@link MissingGrantsException} with the {@code GRANT}
 * statements to run before anything is written, instead of "permission denied" in the middle of a business
 * transaction. A failed check is not remembered, so the next use checks again once the grant is there.
 */
public final class OutboxWriter {

    private static final Logger log = LoggerFactory.getLogger(OutboxWriter.class);

    /** The schema used when none is given: {@link OutboxTables#DEFAULT_SCHEMA}. */
    public static final String DEFAULT_SCHEMA = OutboxTables.DEFAULT_SCHEMA;
    /** 1 MiB: the relays' default Kafka {@code max.request.size}. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = RecordLimits.DEFAULT_MAX_REQUEST_BYTES;
    /** Events sent per round trip; more events take one more round trip per this many. */
    public static final int EVENTS_PER_ROUND_TRIP = 100;

    /** Headers are outboxkit's record contract: written plainly, whatever mapper the payloads use. */
    private static final ObjectMapper HEADERS_JSON = JsonMapper.builder().build();

    private final String schema;
    private final WriteMode mode;
    private final int maxPayloadBytes;
    private final PayloadSerializer serializer;
    private final MeterRegistry meterRegistry;
    private final Clock clock;
    private final String notifyChannel;
    private final EventStatements statements;
    private final GrantsOnce grants;
    final WriterMetrics metrics;

    private OutboxWriter(Builder b) {
        this.schema = b.schema;
        this.mode = b.mode;
        this.maxPayloadBytes = b.maxPayloadBytes;
        this.serializer = b.serializer != null ? b.serializer : JsonMapper.builder().build()::writeValueAsString;
        this.meterRegistry = b.meterRegistry != null ? b.meterRegistry : new SimpleMeterRegistry();
        this.clock = b.clock;
        this.notifyChannel = b.notifyChannel;
        this.statements = new EventStatements(schema, mode, notifyChannel);
        this.metrics = new WriterMetrics(meterRegistry, mode);
        this.grants = new GrantsOnce(switch (mode) {
            case KEEP -> RoleGrants.writer(schema, false);
            case INSERT_AND_DELETE -> RoleGrants.writer(schema, true);
            // pg_logical_emit_message is executable by PUBLIC, and no table is touched.
            case LOGICAL_MESSAGE -> null;
        }, "outbox writer (schema " + schema + ", mode " + mode + ")");
    }

    /**
     * Checks on {@code c}, the first time only, that the connected role holds what this writer's mode needs
     * (outbox-writer/README.md, "Least-privilege grants"); inside the caller's transaction it only reads catalogs.
     *
     * @throws MissingGrantsException naming the role and the {@code GRANT} statements to run
     */
    void requireGrants(Connection c) throws SQLException {
        grants.require(c);
    }

    public static Builder builder() {
        return new Builder();
    }

    public String schema() {
        return schema;
    }

    public WriteMode mode() {
        return mode;
    }

    public int maxPayloadBytes() {
        return maxPayloadBytes;
    }

    /** The channel notified after events are written, or null. */
    public String notifyChannel() {
        return notifyChannel;
    }

    public MeterRegistry meterRegistry() {
        return meterRegistry;
    }

    /**
     * Writes {@code messages} in the connection's current transaction, in one round trip (one
     * more per {@value #EVENTS_PER_ROUND_TRIP} events). Commits nothing: the events become visible
     * when the caller commits and vanish if the caller rolls back. If this throws an
     * {@link SQLException}, the caller's transaction is aborted and must be rolled back.
     *
     * @return the event ids, in order
     * @throws AutoCommitEnabledException when the connection has autocommit on (nothing written)
     * @throws InvalidEventException      when an event is invalid (nothing written)
     * @throws MissingGrantsException     at the writer's first use, when the role lacks a privilege (nothing written)
     */
    public List<UUID> write(Connection c, Collection<OutboxMessage> messages) throws SQLException {
        Objects.requireNonNull(messages, "messages");
        requireTransaction(c);
        requireGrants(c);
        List<PreparedEvent> events = prepareAll(messages);
        for (RoundTrip p : roundTrips(events, null, false)) {
            execute(c, p, metrics.writeRoundTrips);
        }
        metrics.events.increment(events.size());
        return ids(events);
    }

    /** {@link #write(Connection, Collection)} for a few events. */
    public List<UUID> write(Connection c, OutboxMessage... messages) throws SQLException {
        return write(c, Arrays.asList(messages));
    }

    /**
     * Starts buffering events for the connection's current transaction. Nothing is sent until
     * {@link OutboxTransaction#flush()} or {@link OutboxTransaction#commit()}.
     *
     * @throws AutoCommitEnabledException when the connection has autocommit on
     * @throws MissingGrantsException     at the writer's first use, when the role lacks a privilege
     */
    public OutboxTransaction begin(Connection c) throws SQLException {
        requireTransaction(c);
        requireGrants(c);
        return new OutboxTransaction(this, c);
    }

    /**
     * Takes a connection from {@code dataSource}, runs {@code work} in a transaction and commits
     * it together with the work's buffered events in one round trip. If the work throws, the
     * transaction is rolled back and the exception rethrown (checked exceptions other than
     * {@link SQLException} wrapped in {@link WorkFailedException}). The connection's autocommit
     * setting is restored before it is returned to the pool.
     *
     * @throws CommitOutcomeUnknownException when the connection failed during the commit
     * @throws MissingGrantsException        at the writer's first use, when the role lacks a privilege (the work
     *                                       did not run)
     */
    public <T> T inTransaction(DataSource dataSource, TransactionWork<T> work) throws SQLException {
        Objects.requireNonNull(work, "work");
        try (Connection c = dataSource.getConnection()) {
            requireGrants(c); // before the transaction: nothing to roll back if it throws
            boolean autoCommit = c.getAutoCommit();
            if (autoCommit) {
                c.setAutoCommit(false);
            }
            try {
                OutboxTransaction tx = new OutboxTransaction(this, c);
                T result;
                try {
                    result = work.run(c, tx);
                } catch (Throwable t) {
                    tx.rollbackAfter(t);
                    throw WriteFailures.rethrow(t, "the transaction's work failed");
                }
                if (tx.isOpen()) {
                    tx.commit();
                }
                return result;
            } finally {
                if (autoCommit) {
                    restoreAutoCommit(c);
                }
            }
        }
    }

    static void restoreAutoCommit(Connection c) {
        try {
            if (!c.isClosed()) {
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            log.debug("could not restore autocommit on a failed connection; the pool will discard it", e);
        }
    }

    void requireTransaction(Connection c) throws SQLException {
        Objects.requireNonNull(c, "connection");
        if (c.getAutoCommit()) {
            metrics.rejectedAutoCommit.increment();
            throw new AutoCommitEnabledException("the connection has autocommit on, so events would commit on their own, "
                    + "apart from the business change: call connection.setAutoCommit(false) (or open a transaction in your "
                    + "framework) first, or use OutboxWriter.inTransaction(dataSource, work)");
        }
    }

    List<PreparedEvent> prepareAll(Collection<OutboxMessage> messages) {
        List<PreparedEvent> events = new ArrayList<>(messages.size());
        for (OutboxMessage m : messages) {
            events.add(prepare(m));
        }
        return events;
    }

    /** Serialises and checks one event; nothing is sent. */
    PreparedEvent prepare(OutboxMessage m) {
        Objects.requireNonNull(m, "message");
        if (m.payloadBytes() != null) {
            return prepareBinary(m);
        }
        String payload = m.payloadJson();
        if (payload == null) {
            try {
                payload = serializer.toJson(m.payloadObject());
            } catch (Exception e) {
                metrics.rejectedInvalid.increment();
                String why = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
                throw new InvalidEventException("payload of " + m + " could not be serialised by the writer's payload "
                        + "serializer: " + why + "; make the class serialisable by that JSON mapper or pass payloadJson(String)", e);
            }
            if (payload == null) {
                metrics.rejectedInvalid.increment();
                throw new InvalidEventException("payload of " + m + " was serialised to null by the writer's payload serializer: "
                        + "it must return JSON text (\"null\" for a JSON null)");
            }
            String problem = JsonChecks.problem(payload);
            if (problem != null) {
                metrics.rejectedInvalid.increment();
                throw new InvalidEventException("payload of " + m + " " + problem);
            }
        }
        long size = JsonChecks.utf8Length(payload);
        if (size > maxPayloadBytes) {
            metrics.rejectedTooLarge.increment();
            throw new PayloadTooLargeException("payload of " + m + " is " + size + " bytes of JSON; the limit is "
                    + maxPayloadBytes + " bytes (maxPayloadBytes, matching the relay's Kafka max.request.size), so a relay could "
                    + "never publish it. Store large data elsewhere and put a reference in the event, or raise maxPayloadBytes "
                    + "together with the relay's max.request.size and the topic's max.message.bytes", size, maxPayloadBytes);
        }
        metrics.payloadBytes.record(size);
        return new PreparedEvent(m.id(), m.aggregateType(), m.aggregateId(), m.eventType(), m.topic(), payload,
                headersJson(m), null, null);
    }

    /** A binary event: already checked when built, only the size is left. */
    private PreparedEvent prepareBinary(OutboxMessage m) {
        int size = m.payloadBytes().length;
        if (size > maxPayloadBytes) {
            metrics.rejectedTooLarge.increment();
            throw new PayloadTooLargeException("payload of " + m + " is " + size + " bytes (" + m.contentType()
                    + "); the limit is " + maxPayloadBytes + " bytes (maxPayloadBytes, matching the relay's Kafka"
                    + " max.request.size), so a relay could never publish it. Store large data elsewhere and put a reference"
                    + " in the event, or raise maxPayloadBytes together with the relay's max.request.size and the topic's"
                    + " max.message.bytes", size, maxPayloadBytes);
        }
        metrics.payloadBytes.record(size);
        return new PreparedEvent(m.id(), m.aggregateType(), m.aggregateId(), m.eventType(), m.topic(), null,
                headersJson(m), m.payloadBytes(), m.contentType());
    }

    private String headersJson(OutboxMessage m) {
        try {
            Map<String, String> headers = withCurrentTraceContext(m.headers());
            return headers.isEmpty() ? "{}" : HEADERS_JSON.writeValueAsString(headers);
        } catch (JsonProcessingException e) {
            throw new InvalidEventException("headers of " + m + " could not be written as JSON: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * {@code headers} plus the current span's W3C context ({@code traceparent}, {@code tracestate})
     * when OpenTelemetry is on the class path, a span is current and the caller set no
     * {@code traceparent} of its own (an explicit header wins, with or without a tracestate).
     */
    static Map<String, String> withCurrentTraceContext(Map<String, String> headers) {
        if (headers.containsKey(TraceContext.TRACEPARENT)) {
            return headers;
        }
        Map<String, String> context = TraceContext.currentHeaders();
        if (context.isEmpty()) {
            return headers;
        }
        Map<String, String> out = new LinkedHashMap<>(headers);
        out.remove(TraceContext.TRACESTATE); // a tracestate belongs to its traceparent
        out.putAll(context);
        return out;
    }

    /**
     * The pipelines that write {@code events}: full chunks first, then the last one, which also
     * carries {@code head} (statements to run first) and, when {@code commit}, the COMMIT.
     */
    List<RoundTrip> roundTrips(List<PreparedEvent> events, RoundTrip head, boolean commit) {
        List<RoundTrip> pipelines = new ArrayList<>();
        int n = events.size();
        int lastStart = n == 0 ? 0 : ((n - 1) / EVENTS_PER_ROUND_TRIP) * EVENTS_PER_ROUND_TRIP;
        for (int start = 0; start < lastStart; start += EVENTS_PER_ROUND_TRIP) {
            RoundTrip p = new RoundTrip();
            statements.addTo(p, events.subList(start, start + EVENTS_PER_ROUND_TRIP));
            pipelines.add(p);
        }
        RoundTrip last = new RoundTrip();
        if (head != null) {
            last.addAll(head);
        }
        statements.addTo(last, events.subList(lastStart, n));
        if (commit) {
            last.commit();
        }
        if (!last.isEmpty()) {
            pipelines.add(last);
        }
        return pipelines;
    }

    void execute(Connection c, RoundTrip p, Timer timer) throws SQLException {
        Instant start = clock.instant();
        try {
            p.execute(c);
        } finally {
            timer.record(Duration.between(start, clock.instant()));
        }
    }

    private static List<UUID> ids(List<PreparedEvent> events) {
        List<UUID> ids = new ArrayList<>(events.size());
        for (PreparedEvent e : events) {
            ids.add(e.id());
        }
        return List.copyOf(ids);
    }

    @Override
    public String toString() {
        return "OutboxWriter[schema=" + schema + ", mode=" + mode + ", maxPayloadBytes=" + maxPayloadBytes
                + (notifyChannel == null ? "" : ", notifyChannel=" + notifyChannel) + "]";
    }

    /** Configures an {@link OutboxWriter}; {@link #build()} validates. Not thread-safe. */
    public static final class Builder {
        private String schema = DEFAULT_SCHEMA;
        private WriteMode mode = WriteMode.KEEP;
        private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
        private PayloadSerializer serializer;
        private MeterRegistry meterRegistry;
        private Clock clock = Clock.systemUTC();
        private String notifyChannel;

        private Builder() {
        }

        /** Schema holding {@code outbox_event}. Default {@value OutboxWriter#DEFAULT_SCHEMA}. A legal, lower-case identifier. */
        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        /** How events are recorded. Default {@link WriteMode#KEEP}; see {@link WriteMode} for the trade-off. */
        public Builder mode(WriteMode mode) {
            this.mode = mode;
            return this;
        }

        /**
         * Largest payload accepted, in bytes of UTF-8 JSON as sent (PostgreSQL's jsonb rendering,
         * which is the Kafka value, adds a space after each {@code :} and {@code ,}). Default
         * 1 MiB, the relays' default Kafka {@code max.request.size}; keep the two in step.
         */
        public Builder maxPayloadBytes(int maxPayloadBytes) {
            this.maxPayloadBytes = maxPayloadBytes;
            return this;
        }

        /**
         * Serialises {@link OutboxMessage.Builder#payload(Object)} payloads with this Jackson 2 mapper. Default: a plain
         * {@link JsonMapper}. Replaces an earlier {@link #payloadSerializer(PayloadSerializer)}.
         */
        public Builder objectMapper(ObjectMapper objectMapper) {
            this.serializer = objectMapper == null ? null : objectMapper::writeValueAsString;
            return this;
        }

        /**
         * Serialises {@link OutboxMessage.Builder#payload(Object)} payloads with any JSON mapper, for example Jackson 3's
         * {@code jsonMapper::writeValueAsString}; its output is checked as JSON text is. Default: a plain Jackson 2
         * {@link JsonMapper}. Replaces an earlier {@link #objectMapper(ObjectMapper)}.
         */
        public Builder payloadSerializer(PayloadSerializer serializer) {
            this.serializer = serializer;
            return this;
        }

        /** Where the writer's {@code outbox.writer.*} meters go. Default: a private {@link SimpleMeterRegistry}. */
        public Builder meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = meterRegistry;
            return this;
        }

        /** Clock for the round-trip latency metrics. Default {@link Clock#systemUTC()}. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Also runs {@code pg_notify(channel, '')} in the same round trip as the events, so a relay
         * that LISTENs wakes up at commit instead of at its next poll. Default: none. NOTIFY
         * serialises committing transactions on a global lock: measure before enabling it (see
         * docs/performance.md, "outbox-writer: what the outbox costs"). A legal, lower-case identifier.
         */
        public Builder notifyChannel(String channel) {
            this.notifyChannel = channel;
            return this;
        }

        /**
         * @throws IllegalArgumentException naming the setting that is wrong
         */
        public OutboxWriter build() {
            Identifiers.requireValid("schema", schema);
            if (mode == null) {
                throw new IllegalArgumentException("mode must not be null; use WriteMode.KEEP (the default), "
                        + "INSERT_AND_DELETE or LOGICAL_MESSAGE");
            }
            if (maxPayloadBytes < 1) {
                throw new IllegalArgumentException("maxPayloadBytes must be at least 1, got " + maxPayloadBytes);
            }
            if (clock == null) {
                throw new IllegalArgumentException("clock must not be null; the default is Clock.systemUTC()");
            }
            if (notifyChannel != null) {
                Identifiers.requireValid("notifyChannel", notifyChannel);
            }
            return new OutboxWriter(this);
        }
    }
}
