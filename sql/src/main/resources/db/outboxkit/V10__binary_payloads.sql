-- outboxkit schema, version 10: binary payloads (Protobuf, Avro, any bytes with a content type) next
-- to JSON. Applied with search_path set to the target schema: no name below is schema-qualified on purpose.
--
-- Applied while writers and relays of version 9 run, without rewriting a row:
--   * adding a nullable column without a default and dropping NOT NULL change only the catalogue;
--   * each CHECK is added NOT VALID (new rows are checked at once, the table is not scanned under the
--     ACCESS EXCLUSIVE lock), then VALIDATEd in its own transaction, which scans under SHARE UPDATE
--     EXCLUSIVE: writers and relays go on inserting, claiming and deleting meanwhile.
-- Hence this script runs outside a transaction (V10__binary_payloads.sql.conf: executeInTransaction=false)
-- and every statement may be run again after a failure half-way: IF NOT EXISTS, and a DO block that
-- looks before it adds. lock_timeout (SET LOCAL: the caller's pooled connection keeps its own setting)
-- bounds the wait for the brief ACCESS EXCLUSIVE lock, so the ALTER never queues the writers behind a
-- long transaction for longer than that; on a timeout run the migration again.
--
-- A JSON row keeps payload (jsonb) and leaves payload_bytes and content_type NULL: rows written by a
-- version-9 writer are JSON rows as they stand. A binary row has payload NULL, payload_bytes set and a
-- content_type (the Kafka header content-type; its RFC 6838 shape is checked by the writer and the relays).

-- Step 1, one short transaction: the columns and the NOT VALID checks. outbox_dead_letter first, so the
-- lock on the busy outbox_event is taken last and held only until the commit right after it.
DO $$
DECLARE
    t text;
BEGIN
    SET LOCAL lock_timeout = '10s';
    FOREACH t IN ARRAY ARRAY['outbox_dead_letter', 'outbox_event'] LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN payload DROP NOT NULL,'
                       ' ADD COLUMN IF NOT EXISTS payload_bytes bytea, ADD COLUMN IF NOT EXISTS content_type text', t);
        IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = t::regclass AND conname = t || '_one_payload') THEN
            EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK ((payload IS NULL) <> (payload_bytes IS NULL)'
                           ' AND (content_type IS NULL) = (payload_bytes IS NULL)) NOT VALID', t, t || '_one_payload');
        END IF;
    END LOOP;
END
$$;

-- Step 2, one transaction each: the scans, under SHARE UPDATE EXCLUSIVE (writers and relays go on).
ALTER TABLE outbox_event VALIDATE CONSTRAINT outbox_event_one_payload;
ALTER TABLE outbox_dead_letter VALIDATE CONSTRAINT outbox_dead_letter_one_payload;

COMMENT ON COLUMN outbox_event.payload IS 'The Kafka record value of a JSON event, exactly as PostgreSQL renders this jsonb; NULL for a binary event (payload_bytes).';
COMMENT ON COLUMN outbox_event.payload_bytes IS 'The Kafka record value of a binary event (for example Protobuf or Confluent-framed Avro), published unchanged; NULL for a JSON event (payload).';
COMMENT ON COLUMN outbox_event.content_type IS 'Media type of payload_bytes (RFC 6838, for example application/x-protobuf), published as the Kafka header content-type; NULL for a JSON event.';
COMMENT ON CONSTRAINT outbox_event_one_payload ON outbox_event IS 'outboxkit: a row is either JSON (payload) or binary (payload_bytes with content_type), never both or neither.';
COMMENT ON COLUMN outbox_dead_letter.payload IS 'Copied from outbox_event (NULL for a binary event).';
COMMENT ON COLUMN outbox_dead_letter.payload_bytes IS 'Copied from outbox_event (NULL for a JSON event).';
COMMENT ON COLUMN outbox_dead_letter.content_type IS 'Copied from outbox_event (NULL for a JSON event).';
COMMENT ON CONSTRAINT outbox_dead_letter_one_payload ON outbox_dead_letter IS 'outboxkit: a parked row is either JSON (payload) or binary (payload_bytes with content_type).';

-- The intent ledger hashes what the relay publishes: the bytes of a binary event, the jsonb text of a JSON one.
CREATE OR REPLACE FUNCTION outbox_intent_record() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
AS $$
BEGIN
    INSERT INTO outbox_intent (event_id, aggregate_type, aggregate_id, event_type, created_at, published_at, payload_hash)
    SELECT id, aggregate_type, aggregate_id, event_type, created_at, published_at,
           sha256(coalesce(payload_bytes, convert_to(payload::text, 'UTF8')))
      FROM inserted
        ON CONFLICT (event_id, created_at) DO UPDATE SET published_at = EXCLUDED.published_at;
    RETURN NULL;
END
$$;
COMMENT ON COLUMN outbox_intent.payload_hash IS 'SHA-256 of the published value: the payload''s jsonb text rendering, or the bytes of a binary event.';
SELECT outbox_intent_comment_columns(c.relname::text)
  FROM pg_inherits h
  JOIN pg_class c ON c.oid = h.inhrelid
 WHERE h.inhparent = 'outbox_intent'::regclass;
