-- outboxkit schema, version 11: what the WAL relay remembers of its slot's server, so that a slot lost to a
-- failover can be told apart and, where the table holds every unpublished event, created again without an
-- operator. Applied with search_path set to the target schema: no name below is schema-qualified on purpose.
-- Only nullable columns without defaults: a catalogue change, no row rewritten, safe while relays run (a
-- relay of version 10 ignores them).

ALTER TABLE outbox_cdc_slot
    ADD COLUMN IF NOT EXISTS system_identifier bigint,
    ADD COLUMN IF NOT EXISTS timeline integer,
    ADD COLUMN IF NOT EXISTS server_address text,
    ADD COLUMN IF NOT EXISTS recreated_at timestamptz,
    ADD COLUMN IF NOT EXISTS recreated_reason text,
    ADD COLUMN IF NOT EXISTS wal_only_seen_at timestamptz,
    ADD COLUMN IF NOT EXISTS wal_only_seen text;

COMMENT ON COLUMN outbox_cdc_slot.system_identifier IS 'pg_control_system().system_identifier of the server the relay last streamed the slot on (a standby shares its primary''s).';
COMMENT ON COLUMN outbox_cdc_slot.timeline IS 'WAL timeline of that server when the relay last started streaming; a promotion starts a new one.';
COMMENT ON COLUMN outbox_cdc_slot.server_address IS 'host:port the relay reached that server at.';
COMMENT ON COLUMN outbox_cdc_slot.recreated_at IS 'When the relay last created the slot again (it was missing, invalidated or replaced after a failover); NULL: never.';
COMMENT ON COLUMN outbox_cdc_slot.recreated_reason IS 'Why, and where from and to, in one line.';
COMMENT ON COLUMN outbox_cdc_slot.wal_only_seen_at IS 'When the relay, running with deleteAfterPublish, first streamed an event that has no row in outbox_event (a logical decoding message): from then on the WAL may be the only copy of events, so the relay no longer fast-forwards the slot and refuses to create a lost slot again. NULL: never.';
COMMENT ON COLUMN outbox_cdc_slot.wal_only_seen IS 'What that event was, in one line.';
