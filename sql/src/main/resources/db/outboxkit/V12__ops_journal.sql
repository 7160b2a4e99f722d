-- outboxkit schema, version 12: the operations journal. Every reconciliation run, every retention round that ran
-- and every write action an operator takes on dead letters leaves one row here, so that the console (and anybody
-- with SQL) can answer "what did the last run find", "what was purged when" and "who retried what".
-- Applied with search_path set to the target schema: no name below is schema-qualified on purpose.
-- A new table only: safe while writers and relays of version 11 run (nothing of theirs reads or writes it).

CREATE TABLE outbox_ops_journal (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text        NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    actor       text        NOT NULL,
    outcome     text        NOT NULL,
    summary     text        NOT NULL,
    detail      jsonb
);
CREATE INDEX outbox_ops_journal_kind_finished ON outbox_ops_journal (kind, finished_at DESC);
CREATE INDEX outbox_ops_journal_finished ON outbox_ops_journal USING brin (finished_at);

COMMENT ON TABLE outbox_ops_journal IS 'outboxkit: what reconciliation, retention and operators did, one row per run or action; retention keeps it bounded.';
COMMENT ON COLUMN outbox_ops_journal.id IS 'Order of entry.';
COMMENT ON COLUMN outbox_ops_journal.kind IS 'What ran: reconcile, retention, dead-letter-retry, dead-letter-discard.';
COMMENT ON COLUMN outbox_ops_journal.started_at IS 'When the run or action started.';
COMMENT ON COLUMN outbox_ops_journal.finished_at IS 'When it finished.';
COMMENT ON COLUMN outbox_ops_journal.actor IS 'Who: the operator''s name for an action taken in the console, otherwise the tool and host that ran it.';
COMMENT ON COLUMN outbox_ops_journal.outcome IS 'success or failure.';
COMMENT ON COLUMN outbox_ops_journal.summary IS 'One line a person reads: what was found, purged or changed.';
COMMENT ON COLUMN outbox_ops_journal.detail IS 'Bounded JSON detail: counts per kind of finding or per store, the first findings, the selection an action applied to. Never a payload.';
