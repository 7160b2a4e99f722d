-- outboxkit schema, version 4: state of the WAL relay (relay-debezium). Applied with search_path
-- set to the target schema: no name below is schema-qualified on purpose.

-- ---------------------------------------------------------------------------------------------
-- outbox_cdc_slot: one row per replication slot the WAL relay owns. Written when the relay first
-- adopts (or creates) the slot; afterwards a missing or moved slot is detected, never papered over.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE outbox_cdc_slot (
    slot_name   text        PRIMARY KEY,
    base_lsn pg_lsn      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    created_by  text        NOT NULL,
    drained_at  timestamptz
);
COMMENT ON TABLE outbox_cdc_slot IS 'outboxkit: replication slots the WAL relay streams from. A row here with its slot gone (or moved past the stored offset) stops the relay with an error instead of skipping events.';
COMMENT ON COLUMN outbox_cdc_slot.slot_name IS 'Logical replication slot (pgoutput) of the relay; also its lease key cdc/<slot_name>.';
COMMENT ON COLUMN outbox_cdc_slot.base_lsn IS 'Where the slot may be while no offset is stored: its confirmed_flush_lsn when the relay adopted it, or the position the relay fast-forwarded it to after publishing everything before it from the table.';
COMMENT ON COLUMN outbox_cdc_slot.created_at IS 'When the relay adopted the slot.';
COMMENT ON COLUMN outbox_cdc_slot.created_by IS 'Relay instance that adopted the slot.';
COMMENT ON COLUMN outbox_cdc_slot.drained_at IS 'When the rows already in outbox_event at first start were published; NULL: that first drain has not finished.';

-- ---------------------------------------------------------------------------------------------
-- outbox_cdc_offset: Debezium's source offsets, stored next to the data instead of in a file or a
-- Kafka topic. Written only after Kafka acknowledged everything up to the offset, and only by the
-- holder of the lease cdc/<slot_name> (fencing token checked on every write).
-- ---------------------------------------------------------------------------------------------
CREATE TABLE outbox_cdc_offset (
    slot_name    text        NOT NULL,
    offset_key   text        NOT NULL,
    offset_value text,
    fence        bigint      NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    updated_by   text        NOT NULL,
    PRIMARY KEY (slot_name, offset_key)
);
COMMENT ON TABLE outbox_cdc_offset IS 'outboxkit: Debezium source offsets of the WAL relay, written after Kafka acknowledged every event before them, under the relay lease''s fencing token.';
COMMENT ON COLUMN outbox_cdc_offset.slot_name IS 'Replication slot the offset belongs to.';
COMMENT ON COLUMN outbox_cdc_offset.offset_key IS 'Kafka Connect offset key (JSON text: engine name and source partition).';
COMMENT ON COLUMN outbox_cdc_offset.offset_value IS 'Kafka Connect offset value (JSON text: lsn, lsn_commit, lsn_proc, txId, messageType); NULL when Debezium removed it.';
COMMENT ON COLUMN outbox_cdc_offset.fence IS 'Fencing token of the lease holder that wrote it; a holder with a smaller token can no longer overwrite it.';
COMMENT ON COLUMN outbox_cdc_offset.updated_at IS 'When the offset was last written.';
COMMENT ON COLUMN outbox_cdc_offset.updated_by IS 'Relay instance that last wrote the offset.';

-- ---------------------------------------------------------------------------------------------
-- outbox_cdc_heartbeat: the target of the relay's heartbeat query. A row inserted here travels
-- through the WAL like any change, so an idle outbox on a busy database still lets the slot advance.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE outbox_cdc_heartbeat (
    id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slot_name text        NOT NULL,
    beat_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_cdc_heartbeat_slot ON outbox_cdc_heartbeat (slot_name);
COMMENT ON TABLE outbox_cdc_heartbeat IS 'outboxkit: heartbeat rows of the WAL relay (one per slot, replaced on every beat); part of the relay''s publication so the slot can advance while the outbox is idle.';
COMMENT ON COLUMN outbox_cdc_heartbeat.id IS 'Row identity (replica identity, in case a publication also publishes deletes).';
COMMENT ON COLUMN outbox_cdc_heartbeat.slot_name IS 'Slot of the relay that wrote the beat.';
COMMENT ON COLUMN outbox_cdc_heartbeat.beat_at IS 'When the beat was written.';
