-- outboxkit schema, version 1. Applied by dev.outboxkit.testkit / outbox migrate through Flyway,
-- with search_path set to the target schema: no name below is schema-qualified on purpose.

-- ---------------------------------------------------------------------------------------------
-- outbox_event: what a producer writes, in the same transaction as its business rows.
-- Any program that can INSERT the contract columns is a valid producer.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE outbox_event (
    seq            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id             uuid        NOT NULL,
    aggregate_type text        NOT NULL,
    aggregate_id   text        NOT NULL,
    event_type     text        NOT NULL,
    payload        jsonb       NOT NULL,
    headers        jsonb       NOT NULL DEFAULT '{}'::jsonb,
    topic          text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    attempts       integer     NOT NULL DEFAULT 0,
    published_at   timestamptz,
    CONSTRAINT outbox_event_id_key UNIQUE (id),
    CONSTRAINT outbox_event_aggregate_type_present CHECK (aggregate_type <> ''),
    CONSTRAINT outbox_event_aggregate_id_present CHECK (aggregate_id <> ''),
    CONSTRAINT outbox_event_event_type_present CHECK (event_type <> ''),
    CONSTRAINT outbox_event_headers_object CHECK (jsonb_typeof(headers) = 'object'),
    CONSTRAINT outbox_event_topic_legal CHECK (topic IS NULL OR topic ~ '^[a-zA-Z0-9._-]{1,249}$')
);
-- Relays in "mark" mode read only unpublished rows; this keeps that read cheap.
CREATE INDEX outbox_event_unpublished ON outbox_event (seq) WHERE published_at IS NULL;

COMMENT ON TABLE outbox_event IS 'outboxkit: events written in the producer''s transaction, waiting for a relay to publish them to Kafka (deleted, or marked published_at, once Kafka acknowledged them).';
COMMENT ON COLUMN outbox_event.seq IS 'Insertion order. For one aggregate it follows commit order because writers serialise on the aggregate; relays publish in seq order.';
COMMENT ON COLUMN outbox_event.id IS 'Event id (UUIDv7 by default): Kafka header "id", and the consumers'' dedupe key.';
COMMENT ON COLUMN outbox_event.aggregate_type IS 'Kind of entity the event is about; picks the default topic outbox.event.<aggregate_type>.';
COMMENT ON COLUMN outbox_event.aggregate_id IS 'Entity id; the Kafka record key, so one aggregate stays in one partition, in order.';
COMMENT ON COLUMN outbox_event.event_type IS 'What happened (Kafka header "eventType").';
COMMENT ON COLUMN outbox_event.payload IS 'The Kafka record value, exactly as PostgreSQL renders this jsonb.';
COMMENT ON COLUMN outbox_event.headers IS 'Extra Kafka headers: each top-level string entry becomes one header (for example traceparent).';
COMMENT ON COLUMN outbox_event.topic IS 'Explicit destination topic; NULL means the relay''s route template decides.';
COMMENT ON COLUMN outbox_event.created_at IS 'Commit-side timestamp (Kafka header "createdAt"); commit-to-ack latency is measured from it.';
COMMENT ON COLUMN outbox_event.attempts IS 'Publication attempts that failed so far; a row that keeps failing is parked in outbox_dead_letter.';
COMMENT ON COLUMN outbox_event.published_at IS 'Set instead of deleting the row when a relay runs in mark mode; NULL means not yet published.';

-- ---------------------------------------------------------------------------------------------
-- outbox_dead_letter: rows Kafka refused for good (too large, illegal topic). Parked, never dropped.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE outbox_dead_letter (
    id             uuid        PRIMARY KEY,
    seq            bigint      NOT NULL,
    aggregate_type text        NOT NULL,
    aggregate_id   text        NOT NULL,
    event_type     text        NOT NULL,
    payload        jsonb       NOT NULL,
    headers        jsonb       NOT NULL,
    topic          text,
    created_at     timestamptz NOT NULL,
    error_class    text        NOT NULL,
    error_message  text        NOT NULL,
    attempts       integer     NOT NULL,
    parked_at      timestamptz NOT NULL DEFAULT now(),
    parked_by      text        NOT NULL
);
CREATE INDEX outbox_dead_letter_aggregate ON outbox_dead_letter (aggregate_type, aggregate_id);

COMMENT ON TABLE outbox_dead_letter IS 'outboxkit: outbox rows that Kafka refused for good, parked with the reason; retry or discard them with "outbox dead-letters".';
COMMENT ON COLUMN outbox_dead_letter.id IS 'The event id of the parked row.';
COMMENT ON COLUMN outbox_dead_letter.seq IS 'The row''s seq in outbox_event, to keep order on retry.';
COMMENT ON COLUMN outbox_dead_letter.aggregate_type IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_dead_letter.aggregate_id IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_dead_letter.event_type IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_dead_letter.payload IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_dead_letter.headers IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_dead_letter.topic IS 'Copied from outbox_event (NULL: route template).';
COMMENT ON COLUMN outbox_dead_letter.created_at IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_dead_letter.error_class IS 'Exception class of the last, terminal failure (for example org.apache.kafka.common.errors.RecordTooLargeException).';
COMMENT ON COLUMN outbox_dead_letter.error_message IS 'Message of the last failure.';
COMMENT ON COLUMN outbox_dead_letter.attempts IS 'How many times publication was tried.';
COMMENT ON COLUMN outbox_dead_letter.parked_at IS 'When the relay parked the row.';
COMMENT ON COLUMN outbox_dead_letter.parked_by IS 'Relay instance that parked the row.';

-- ---------------------------------------------------------------------------------------------
-- Relay leases and fencing tokens.
-- ---------------------------------------------------------------------------------------------
CREATE SEQUENCE outbox_fence_seq AS bigint;
COMMENT ON SEQUENCE outbox_fence_seq IS 'outboxkit: source of fencing tokens; every lease acquisition takes a new, larger value.';

CREATE TABLE outbox_relay_lease (
    lease_key   text        PRIMARY KEY,
    holder      text        NOT NULL,
    fence       bigint      NOT NULL,
    acquired_at timestamptz NOT NULL DEFAULT now(),
    renewed_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
COMMENT ON TABLE outbox_relay_lease IS 'outboxkit: which relay instance owns which unit of work (a poller partition, a CDC slot) until when.';
COMMENT ON COLUMN outbox_relay_lease.lease_key IS 'The unit of work, for example poll/17 (partition 17 of the polling relay) or cdc/<slot>.';
COMMENT ON COLUMN outbox_relay_lease.holder IS 'Relay instance id holding the lease.';
COMMENT ON COLUMN outbox_relay_lease.fence IS 'Fencing token from outbox_fence_seq, taken when the lease was acquired; every claim, delete and offset write checks it.';
COMMENT ON COLUMN outbox_relay_lease.acquired_at IS 'When the current holder acquired the lease.';
COMMENT ON COLUMN outbox_relay_lease.renewed_at IS 'When the holder last renewed it.';
COMMENT ON COLUMN outbox_relay_lease.expires_at IS 'After this instant another instance may take the lease (with a new, larger fence).';

-- ---------------------------------------------------------------------------------------------
-- Request idempotency keys (Stripe-style): claimed by INSERT under the primary key.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE idempotency_key (
    scope            text        NOT NULL,
    idem_key         text        NOT NULL,
    request_hash     bytea       NOT NULL,
    state            text        NOT NULL,
    locked_until     timestamptz,
    response_status  integer,
    response_headers jsonb,
    response_body    bytea,
    created_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    PRIMARY KEY (scope, idem_key),
    CONSTRAINT idempotency_key_state_known CHECK (state IN ('in_progress', 'completed')),
    CONSTRAINT idempotency_key_completed_has_response CHECK (state <> 'completed' OR response_status IS NOT NULL)
);
CREATE INDEX idempotency_key_created ON idempotency_key (created_at);
COMMENT ON TABLE idempotency_key IS 'outboxkit: request idempotency keys; the first request with a key claims it, retries replay the stored response.';
COMMENT ON COLUMN idempotency_key.scope IS 'Namespace of the key (for example a tenant or an endpoint).';
COMMENT ON COLUMN idempotency_key.idem_key IS 'The client''s Idempotency-Key.';
COMMENT ON COLUMN idempotency_key.request_hash IS 'SHA-256 of the canonical request; the same key with another request is refused.';
COMMENT ON COLUMN idempotency_key.state IS 'in_progress while the first request runs; completed once its outcome is stored.';
COMMENT ON COLUMN idempotency_key.locked_until IS 'Lease of an in_progress claim; after it a retry may take over from a crashed holder.';
COMMENT ON COLUMN idempotency_key.response_status IS 'Stored outcome: status code replayed to retries.';
COMMENT ON COLUMN idempotency_key.response_headers IS 'Stored outcome: response headers replayed to retries.';
COMMENT ON COLUMN idempotency_key.response_body IS 'Stored outcome: response body replayed to retries.';
COMMENT ON COLUMN idempotency_key.created_at IS 'When the key was first claimed; retention counts from here.';
COMMENT ON COLUMN idempotency_key.completed_at IS 'When the outcome was stored.';

CREATE TABLE idempotency_key_tombstone (
    scope        text        NOT NULL,
    idem_key     text        NOT NULL,
    request_hash bytea       NOT NULL,
    outcome_hash bytea,
    created_at   timestamptz NOT NULL,
    purged_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, idem_key)
);
COMMENT ON TABLE idempotency_key_tombstone IS 'outboxkit: compact record of purged idempotency keys, so a late retry is recognised instead of executed again.';
COMMENT ON COLUMN idempotency_key_tombstone.scope IS 'Namespace of the purged key.';
COMMENT ON COLUMN idempotency_key_tombstone.idem_key IS 'The purged key.';
COMMENT ON COLUMN idempotency_key_tombstone.request_hash IS 'SHA-256 of the request that used the key.';
COMMENT ON COLUMN idempotency_key_tombstone.outcome_hash IS 'SHA-256 of the stored response, for audit.';
COMMENT ON COLUMN idempotency_key_tombstone.created_at IS 'When the key was first claimed.';
COMMENT ON COLUMN idempotency_key_tombstone.purged_at IS 'When the full record was purged.';

-- ---------------------------------------------------------------------------------------------
-- processed_event: the consumer-side inbox. A redelivered event finds its id here and is skipped.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE processed_event (
    consumer_group  text        NOT NULL,
    event_id        uuid        NOT NULL,
    processed_at    timestamptz NOT NULL DEFAULT now(),
    topic           text,
    kafka_partition integer,
    kafka_offset    bigint,
    outcome_hash    bytea,
    PRIMARY KEY (consumer_group, event_id)
);
CREATE INDEX processed_event_age ON processed_event (consumer_group, processed_at);
COMMENT ON TABLE processed_event IS 'outboxkit: event ids a consumer group has applied, inserted in the same transaction as the effect.';
COMMENT ON COLUMN processed_event.consumer_group IS 'Kafka consumer group (or any name for a set of effects) that applied the event.';
COMMENT ON COLUMN processed_event.event_id IS 'The event id (Kafka header "id").';
COMMENT ON COLUMN processed_event.processed_at IS 'When the effect committed; retention counts from here.';
COMMENT ON COLUMN processed_event.topic IS 'Topic the event was read from (retention checks the group''s committed offsets against it).';
COMMENT ON COLUMN processed_event.kafka_partition IS 'Partition the event was read from.';
COMMENT ON COLUMN processed_event.kafka_offset IS 'Offset the event was read from; a record may be purged only once the group committed past it.';
COMMENT ON COLUMN processed_event.outcome_hash IS 'Optional SHA-256 of the effect''s outcome, for reconciliation.';
