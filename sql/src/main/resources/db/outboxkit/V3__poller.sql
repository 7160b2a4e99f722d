-- outboxkit schema, version 3: what the polling relay (relay-poller) adds.
-- Applied with search_path set to the target schema: no name below is schema-qualified on purpose.

-- ---------------------------------------------------------------------------------------------
-- outbox_relay_member: the polling relay instances that are alive, so each can take its fair
-- share of the partition leases (outbox_relay_lease, keys poll/<n>) and give back the rest.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE outbox_relay_member (
    member_id    text        PRIMARY KEY,
    partitions   integer     NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    CONSTRAINT outbox_relay_member_partitions_positive CHECK (partitions > 0)
);
COMMENT ON TABLE outbox_relay_member IS 'outboxkit: polling relay instances that are alive; each takes about partitions / members of the poll/<n> leases.';
COMMENT ON COLUMN outbox_relay_member.member_id IS 'Relay instance id (the holder in outbox_relay_lease).';
COMMENT ON COLUMN outbox_relay_member.partitions IS 'The instance''s partition count; instances that disagree on it refuse to take leases (an aggregate would map to two partitions).';
COMMENT ON COLUMN outbox_relay_member.started_at IS 'When the instance joined.';
COMMENT ON COLUMN outbox_relay_member.heartbeat_at IS 'When the instance last renewed its membership.';
COMMENT ON COLUMN outbox_relay_member.expires_at IS 'After this instant the instance counts as gone (crashed or paused); its leases expire with it.';

-- ---------------------------------------------------------------------------------------------
-- Optional wake-up for relays that LISTEN (relay-poller listenNotify). Not attached by default:
-- NOTIFY serialises committing transactions on a global lock, which costs writers throughput
-- (see the relay-poller README for the measurement). To attach it:
--   CREATE TRIGGER outbox_event_notify AFTER INSERT ON outbox_event
--     FOR EACH STATEMENT EXECUTE FUNCTION outbox_event_notify();
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION outbox_event_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('outbox_event', TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION outbox_event_notify() IS 'outboxkit: statement-level trigger function that wakes LISTENing polling relays (channel outbox_event, payload = schema). Attach it only when relays run with listenNotify.';
