package dev.outboxkit.core;

/**
 * The one place that knows where outboxkit's tables live: the default schema, the table names the
 * migrations create, and their schema-qualified, quoted form for SQL.
 *
 * <p>The schema comes from configuration (a flag, a Spring property, a builder), so it is checked by
 * {@link Identifiers#requireValid} when an instance is made and double-quoted in every name it hands out:
 * a configured value can never change the meaning of a statement. Code that builds SQL takes its names from
 * an instance ({@code OutboxTables.in(schema).outboxEvent()}), never by concatenating the schema itself.
 *
 * <p>Immutable and cheap; make one per schema and keep it.
 */
public final class OutboxTables {

    /** The schema every builder, flag and property uses when none is given. */
    public static final String DEFAULT_SCHEMA = "public";

    /** What producers write (schema contract: id, aggregate_type, aggregate_id, event_type, payload, …). */
    public static final String OUTBOX_EVENT = "outbox_event";
    /** Rows Kafka refused for good, parked by a relay (G7). */
    public static final String DEAD_LETTER = "outbox_dead_letter";
    /** Relay leases with their fencing tokens. */
    public static final String RELAY_LEASE = "outbox_relay_lease";
    /** The sequence the fencing tokens come from. */
    public static final String FENCE_SEQUENCE = "outbox_fence_seq";
    /** The polling relays' membership (who is alive, for the partition split). */
    public static final String RELAY_MEMBER = "outbox_relay_member";
    /** The CDC relay's Debezium offsets, committed after Kafka acknowledged. */
    public static final String CDC_OFFSET = "outbox_cdc_offset";
    /** The replication slots the CDC relay streams from (a slot gone or moved past its offset stops the relay). */
    public static final String CDC_SLOT = "outbox_cdc_slot";
    /** The CDC relay's heartbeat rows (so an idle outbox does not pin WAL). */
    public static final String CDC_HEARTBEAT = "outbox_cdc_heartbeat";
    /** The intent ledger (outbox-ops; partitioned by day). */
    public static final String INTENT = "outbox_intent";
    /** Request idempotency keys. */
    public static final String IDEMPOTENCY_KEY = "idempotency_key";
    /** What is kept of purged idempotency keys. */
    public static final String IDEMPOTENCY_KEY_TOMBSTONE = "idempotency_key_tombstone";
    /** The consumers' dedupe records (consumer group + event id). */
    public static final String PROCESSED_EVENT = "processed_event";
    /** Effects outside the database, claimed and recorded by consumer-dedupe. */
    public static final String EXTERNAL_EFFECT = "external_effect";
    /** What reconciliation, retention and operators did (outbox-ops), one row per run or action. */
    public static final String OPS_JOURNAL = "outbox_ops_journal";
    /** What each relay instance, polling or CDC, says about itself: ready or not, and what it published. */
    public static final String RELAY_REPORT = "outbox_relay_report";

    private final String schema;

    private OutboxTables(String schema) {
        this.schema = schema;
    }

    /**
     * The tables in {@code schema}.
     *
     * @throws IllegalArgumentException naming {@code schema} and the rule when it is not a legal identifier
     */
    public static OutboxTables in(String schema) {
        return new OutboxTables(Identifiers.requireValid("schema", schema));
    }

    /** The tables in {@value #DEFAULT_SCHEMA}. */
    public static OutboxTables inDefaultSchema() {
        return new OutboxTables(DEFAULT_SCHEMA);
    }

    /** The schema, validated, unquoted. */
    public String schema() {
        return schema;
    }

    /** {@code "schema"."table"}, both validated and quoted. */
    public String qualified(String table) {
        return Identifiers.qualified(schema, table);
    }

    /** {@code "schema"."outbox_event"}. */
    public String outboxEvent() {
        return qualified(OUTBOX_EVENT);
    }

    /** {@code "schema"."outbox_dead_letter"}. */
    public String deadLetter() {
        return qualified(DEAD_LETTER);
    }

    /** {@code "schema"."outbox_relay_lease"}. */
    public String relayLease() {
        return qualified(RELAY_LEASE);
    }

    /** {@code "schema"."outbox_fence_seq"}. */
    public String fenceSequence() {
        return qualified(FENCE_SEQUENCE);
    }

    /** {@code "schema"."outbox_intent"}. */
    public String intent() {
        return qualified(INTENT);
    }

    /** {@code "schema"."idempotency_key"}. */
    public String idempotencyKey() {
        return qualified(IDEMPOTENCY_KEY);
    }

    /** {@code "schema"."processed_event"}. */
    public String processedEvent() {
        return qualified(PROCESSED_EVENT);
    }

    /** {@code "schema"."external_effect"}. */
    public String externalEffect() {
        return qualified(EXTERNAL_EFFECT);
    }

    /** {@code "schema"."outbox_ops_journal"}. */
    public String opsJournal() {
        return qualified(OPS_JOURNAL);
    }

    /** {@code "schema"."outbox_relay_report"}. */
    public String relayReport() {
        return qualified(RELAY_REPORT);
    }

    @Override
    public String toString() {
        return "outboxkit tables in schema " + schema;
    }
}
