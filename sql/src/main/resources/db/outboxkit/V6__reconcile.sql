-- outboxkit schema, version 6: the intent ledger for reconciliation (outbox-ops).
-- Applied with search_path set to the target schema: no name below is schema-qualified on purpose;
-- the functions pin that search_path (SET search_path FROM CURRENT) so they work from any session.

-- ---------------------------------------------------------------------------------------------
-- outbox_intent: a compact record of every event a producer wrote, kept for a retention period
-- after the outbox row itself is gone. Partitioned by day on created_at so retention drops whole
-- partitions instead of deleting rows. The default partition catches rows for days nobody created
-- a partition for, so a producer never fails because of the ledger.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE outbox_intent (
    event_id       uuid        NOT NULL,
    aggregate_type text        NOT NULL,
    aggregate_id   text        NOT NULL,
    event_type     text        NOT NULL,
    created_at     timestamptz NOT NULL,
    published_at   timestamptz,
    payload_hash   bytea       NOT NULL,
    PRIMARY KEY (event_id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX outbox_intent_created ON outbox_intent USING brin (created_at);

CREATE TABLE outbox_intent_default PARTITION OF outbox_intent DEFAULT;

COMMENT ON TABLE outbox_intent IS 'outboxkit: intent ledger, one compact row per event written to outbox_event, partitioned by day on created_at; reconcile compares it with the consumers'' effects, retention drops whole day partitions.';
COMMENT ON COLUMN outbox_intent.event_id IS 'The event id (outbox_event.id).';
COMMENT ON COLUMN outbox_intent.aggregate_type IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_intent.aggregate_id IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_intent.event_type IS 'Copied from outbox_event.';
COMMENT ON COLUMN outbox_intent.created_at IS 'Copied from outbox_event; the partition key.';
COMMENT ON COLUMN outbox_intent.published_at IS 'Copied from outbox_event when a producer inserts an already published row; NULL otherwise (relays do not update the ledger: reconcile asks outbox_event whether a missing effect is still unpublished).';
COMMENT ON COLUMN outbox_intent.payload_hash IS 'SHA-256 of the payload''s jsonb text rendering, to compare with what consumers saw.';
COMMENT ON TABLE outbox_intent_default IS 'outboxkit: default partition of outbox_intent for days without their own partition (outbox intents enable / outbox purge create them ahead); expired rows here are deleted row by row.';
COMMENT ON INDEX outbox_intent_created IS 'outboxkit: time-bounded scans of the intent ledger (reconcile).';

-- One INSERT … SELECT per statement on outbox_event, from its transition table: cheap for batched
-- writers, and it works for every producer and both relays without any relay code.
CREATE FUNCTION outbox_intent_record() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
AS $$
BEGIN
    INSERT INTO outbox_intent (event_id, aggregate_type, aggregate_id, event_type, created_at, published_at, payload_hash)
    SELECT id, aggregate_type, aggregate_id, event_type, created_at, published_at,
           sha256(convert_to(payload::text, 'UTF8'))
      FROM inserted;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION outbox_intent_record() IS 'outboxkit: copies the rows of one INSERT statement on outbox_event into the intent ledger.';

CREATE TRIGGER outbox_intent_record AFTER INSERT ON outbox_event
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_intent_record();
COMMENT ON TRIGGER outbox_intent_record ON outbox_event IS 'outboxkit: fills outbox_intent; created disabled (it costs batched writers about a third of their insert rate), switched with outbox intents enable|disable.';
-- Off until an operator opts in with outbox intents enable (see docs/readme/reconcile.md for the measured cost).
ALTER TABLE outbox_event DISABLE TRIGGER outbox_intent_record;

-- Copies the column comments of outbox_intent to one of its partitions.
CREATE FUNCTION outbox_intent_comment_columns(partition_name text) RETURNS void
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
AS $$
DECLARE
    col record;
BEGIN
    FOR col IN SELECT a.attname, col_description(a.attrelid, a.attnum) AS descr
                 FROM pg_attribute a
                WHERE a.attrelid = 'outbox_intent'::regclass AND a.attnum > 0 AND NOT a.attisdropped LOOP
        EXECUTE format('COMMENT ON COLUMN %I.%I IS %L', partition_name, col.attname, col.descr);
    END LOOP;
END
$$;
COMMENT ON FUNCTION outbox_intent_comment_columns(text) IS 'outboxkit: gives a partition of outbox_intent the column comments of its parent.';
SELECT outbox_intent_comment_columns('outbox_intent_default');

-- Creates the day partitions of outbox_intent from the day of from_day for days_ahead days
-- (idempotent). Names: outbox_intent_pYYYYMMDD, days in UTC.
CREATE FUNCTION outbox_intent_create_partitions(from_day date, days_ahead integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
AS $$
DECLARE
    d       date;
    created integer := 0;
    name    text;
BEGIN
    FOR i IN 0 .. days_ahead - 1 LOOP
        d := from_day + i;
        name := 'outbox_intent_p' || to_char(d, 'YYYYMMDD');
        IF to_regclass(quote_ident(name)) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF outbox_intent FOR VALUES FROM (%L) TO (%L)',
                           name, (d::timestamp AT TIME ZONE 'UTC'), ((d + 1)::timestamp AT TIME ZONE 'UTC'));
            EXECUTE format('COMMENT ON TABLE %I IS %L', name,
                           'outboxkit: outbox_intent rows created on ' || d || ' (UTC); dropped whole by retention.');
            PERFORM outbox_intent_comment_columns(name);
            created := created + 1;
        END IF;
    END LOOP;
    RETURN created;
END
$$;
COMMENT ON FUNCTION outbox_intent_create_partitions(date, integer) IS 'outboxkit: creates the day partitions of outbox_intent ahead of time; returns how many it created.';

SELECT outbox_intent_create_partitions((now() AT TIME ZONE 'UTC')::date - 1, 9);
