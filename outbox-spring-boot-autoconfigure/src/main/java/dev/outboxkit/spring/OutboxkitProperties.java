package dev.outboxkit.spring;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.WriteMode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code outboxkit.*} settings of a Spring Boot application. Bound by the auto-configuration;
 * applications set them in {@code application.yml}, not in code. Defaults are literals so the
 * configuration processor documents them; a test checks they equal the libraries' defaults.
 */
@ConfigurationProperties("outboxkit")
public class OutboxkitProperties {

    /** PostgreSQL schema holding the outboxkit tables (outbox_event, idempotency_key, processed_event, ...). */
    private String schema = OutboxTables.DEFAULT_SCHEMA;

    private final Migration migration = new Migration();
    private final Writer writer = new Writer();
    private final Idempotency idempotency = new Idempotency();
    private final Consumer consumer = new Consumer();
    private final Relay relay = new Relay();
    private final Console console = new Console();

    public String getSchema() {
        return schema;
    }

    public void setSchema(String schema) {
        this.schema = schema;
    }

    public Migration getMigration() {
        return migration;
    }

    public Writer getWriter() {
        return writer;
    }

    public Idempotency getIdempotency() {
        return idempotency;
    }

    public Consumer getConsumer() {
        return consumer;
    }

    public Relay getRelay() {
        return relay;
    }

    public Console getConsole() {
        return console;
    }

    /** The operator console (outbox-console) in the management context, next to the Actuator endpoints. */
    public static class Console {

        /**
         * Serve the operator console at the Actuator base path + /outboxkit-console (on management.server.port when
         * one is set). Needs dev.outboxkit:outbox-console and Actuator on the class path.
         */
        private boolean enabled = false;

        /** Offer Retry and Discard of dead letters to users with outboxkit.console.operator-role; off: read-only for all. */
        private boolean writeActions = false;

        /** Show an event's payload (its first 64 KiB) on the event page, each read audited; off: sizes only. */
        private boolean showPayloads = false;

        /**
         * The tracing UI's page of one trace, with {traceId} where the trace id goes (for example
         * https://jaeger.example/trace/{traceId}): the event page links the trace that wrote the event. Unset: the page
         * shows the trace id only.
         */
        private String traceUrl;

        /**
         * The role (HttpServletRequest.isUserInRole, Spring Security's ROLE_ prefix left out) a user needs to retry and
         * discard; the audit log names the user.
         */
        private String operatorRole = "OUTBOX_OPERATOR";

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public boolean isWriteActions() {
            return writeActions;
        }

        public void setWriteActions(boolean writeActions) {
            this.writeActions = writeActions;
        }

        public boolean isShowPayloads() {
            return showPayloads;
        }

        public void setShowPayloads(boolean showPayloads) {
            this.showPayloads = showPayloads;
        }

        public String getTraceUrl() {
            return traceUrl;
        }

        public void setTraceUrl(String traceUrl) {
            this.traceUrl = traceUrl;
        }

        public String getOperatorRole() {
            return operatorRole;
        }

        public void setOperatorRole(String operatorRole) {
            this.operatorRole = operatorRole;
        }
    }

    /** Schema migration at start-up. */
    public static class Migration {

        /**
         * Apply the outboxkit schema (dev.outboxkit.sql.Migrations, its own Flyway history table
         * outboxkit_schema_history) to outboxkit.schema at start-up, before any outboxkit bean is used.
         */
        private boolean enabled = false;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** The writer behind SpringOutboxWriter. */
    public static class Writer {

        /** How events are recorded: KEEP (rows in outbox_event), INSERT_AND_DELETE or LOGICAL_MESSAGE (CDC relay only). */
        private WriteMode mode = WriteMode.KEEP;

        /** Largest payload accepted, in bytes of UTF-8 JSON; keep it in step with the relay's Kafka max.request.size. */
        private int maxPayloadBytes = 1048576;

        /** Channel to NOTIFY after events are written (for a polling relay with listen-notify), or none. */
        private String notifyChannel;

        public WriteMode getMode() {
            return mode;
        }

        public void setMode(WriteMode mode) {
            this.mode = mode;
        }

        public int getMaxPayloadBytes() {
            return maxPayloadBytes;
        }

        public void setMaxPayloadBytes(int maxPayloadBytes) {
            this.maxPayloadBytes = maxPayloadBytes;
        }

        public String getNotifyChannel() {
            return notifyChannel;
        }

        public void setNotifyChannel(String notifyChannel) {
            this.notifyChannel = notifyChannel;
        }
    }

    /** Idempotency keys for Spring MVC endpoints annotated with @Idempotent. */
    public static class Idempotency {

        /** Register the filter that serves @Idempotent endpoints. */
        private boolean enabled = true;

        /** How long a claim stays exclusive; longer than the slowest endpoint. Also the Retry-After of a 503. */
        private Duration lease = Duration.ofSeconds(30);

        /**
         * Shortest Retry-After of a 409 for a key whose first request still runs: a retry is told to wait
         * about as long as that request has run so far, at least this, at most the rest of the lease.
         */
        private Duration retryAfter = IdempotencyKeys.DEFAULT_RETRY_AFTER;

        /** How long keys are kept after their first use (purge them with IdempotencyKeys.purgeExpired). */
        private Duration retention = Duration.ofHours(24);

        /** Largest request body an @Idempotent endpoint accepts (it is buffered to be hashed); larger ones get 413. */
        private int maxRequestBytes = 1048576;

        /**
         * Statuses below 500 that are NOT stored as the key's outcome: the claim is released so the
         * client may retry with the same key. Every other status below 500 is stored and replayed; 5xx never are.
         */
        private List<Integer> retriableStatuses = List.of(401, 403, 408, 409, 425, 429);

        /** Order of the filter; it must run after Spring Security's filter chain (order -100) to see the caller. */
        private int filterOrder = 0;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getRetryAfter() {
            return retryAfter;
        }

        public void setRetryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
        }

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }

        public Duration getRetention() {
            return retention;
        }

        public void setRetention(Duration retention) {
            this.retention = retention;
        }

        public int getMaxRequestBytes() {
            return maxRequestBytes;
        }

        public void setMaxRequestBytes(int maxRequestBytes) {
            this.maxRequestBytes = maxRequestBytes;
        }

        public List<Integer> getRetriableStatuses() {
            return retriableStatuses;
        }

        public void setRetriableStatuses(List<Integer> retriableStatuses) {
            this.retriableStatuses = retriableStatuses;
        }

        public int getFilterOrder() {
            return filterOrder;
        }

        public void setFilterOrder(int filterOrder) {
            this.filterOrder = filterOrder;
        }
    }

    /** The inbox used by SpringInbox. */
    public static class Consumer {

        /**
         * Consumer group the inbox records event ids under. Default: the group id of the
         * @KafkaListener the call runs in.
         */
        private String group;

        /**
         * How long the inbox keeps processed ids (InboxRetention) and so the late-arrival
         * threshold: a new event created longer ago than this is not applied (its id may have
         * been purged), it goes to <topic>.review. As consumer-dedupe's retention.
         */
        private Duration retention = Duration.ofDays(7);

        /** review: late arrivals go to <topic>.review; dead-letter: to <topic>.dlq; apply: no check, they are applied. */
        private LateArrival lateArrival = LateArrival.REVIEW;

        /**
         * Auto-configure a Spring Kafka error handler that retries a failing record and then
         * forwards it to <topic>.dlq with consumer-dedupe's dead-letter headers (undecodable
         * records and late arrivals at once). Backs off when the application defines a CommonErrorHandler.
         */
        private boolean deadLetters = true;

        /** Tries of a failing record before it is dead-lettered (1-100), with backoff from 200 ms doubling to 10 s. */
        private int maxAttempts = 5;

        public String getGroup() {
            return group;
        }

        public void setGroup(String group) {
            this.group = group;
        }

        public Duration getRetention() {
            return retention;
        }

        public void setRetention(Duration retention) {
            if (retention == null || retention.isNegative() || retention.isZero()) {
                throw new IllegalArgumentException("outboxkit.consumer.retention must be positive, got " + retention);
            }
            this.retention = retention;
        }

        public LateArrival getLateArrival() {
            return lateArrival;
        }

        public void setLateArrival(LateArrival lateArrival) {
            this.lateArrival = lateArrival;
        }

        public boolean isDeadLetters() {
            return deadLetters;
        }

        public void setDeadLetters(boolean deadLetters) {
            this.deadLetters = deadLetters;
        }

        public int getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(int maxAttempts) {
            if (maxAttempts < 1 || maxAttempts > 100) {
                throw new IllegalArgumentException("outboxkit.consumer.max-attempts must be 1-100, got " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
        }
    }

    /** What the inbox does with a new event older than the retention window. */
    public enum LateArrival {
        /** Forward it to {@code <topic>.review}, neither applied nor recorded. */
        REVIEW,
        /** Forward it to {@code <topic>.dlq}. */
        DEAD_LETTER,
        /** Apply it (no check). */
        APPLY
    }

    /** A relay inside the application. */
    public static class Relay {

        /** none: no relay here (run `outbox relay` as a sidecar); poll: the polling relay; cdc: the CDC relay (needs relay-debezium). */
        private RelayMode mode = RelayMode.NONE;

        /** Kafka bootstrap servers of the relay. Default: spring.kafka.bootstrap-servers. */
        private String bootstrapServers;

        /** JDBC URL the relay connects with (its own small pool). Default: spring.datasource.url. */
        private String jdbcUrl;

        /** Database user of the relay. Default: spring.datasource.username. */
        private String username;

        /** Database password of the relay. Default: spring.datasource.password. */
        private String password;

        /**
         * Further relay options by their kebab-case name, as the `outbox relay` command spells them
         * (for example partitions, batch-size, lease-duration, instance-id, after-publish, slot-name).
         */
        private Map<String, String> options = new LinkedHashMap<>();

        public RelayMode getMode() {
            return mode;
        }

        public void setMode(RelayMode mode) {
            this.mode = mode;
        }

        public String getBootstrapServers() {
            return bootstrapServers;
        }

        public void setBootstrapServers(String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
        }

        public String getJdbcUrl() {
            return jdbcUrl;
        }

        public void setJdbcUrl(String jdbcUrl) {
            this.jdbcUrl = jdbcUrl;
        }

        public String getUsername() {
            return username;
        }

        public void setUsername(String username) {
            this.username = username;
        }

        public String getPassword() {
            return password;
        }

        public void setPassword(String password) {
            this.password = password;
        }

        public Map<String, String> getOptions() {
            return options;
        }

        public void setOptions(Map<String, String> options) {
            this.options = options;
        }
    }

    /** Which relay runs inside the application. */
    public enum RelayMode {
        /** None: a sidecar or another service relays. */
        NONE,
        /** The polling relay (relay-poller). */
        POLL,
        /** The CDC relay on Debezium Embedded (relay-debezium). */
        CDC
    }
}
