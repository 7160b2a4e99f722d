-- outboxkit schema, version 13: the relay reports. Every relay instance, polling or CDC, holder or standby, writes
-- one row here about once a second: whether it is ready (and why not), and how much it published. So the console
-- (and anybody with SQL) sees the whole fleet, whichever process each instance runs in. Best effort: a relay that
-- cannot write its row (no table, no grant) says so once in its log and publishes all the same.
-- Applied with search_path set to the target schema: no name below is schema-qualified on purpose.
-- A new table only: safe while writers and relays of version 12 run (nothing of theirs reads or writes it).

CREATE TABLE outbox_relay_report (
    instance_id       text        PRIMARY KEY,
    relay             text        NOT NULL,
    host              text,
    started_at        timestamptz NOT NULL,
    reported_at       timestamptz NOT NULL,
    expires_at        timestamptz NOT NULL,
    ready             boolean     NOT NULL,
    problem           text,
    published         bigint      NOT NULL,
    last_published_at timestamptz,
    CONSTRAINT outbox_relay_report_relay CHECK (relay IN ('poll', 'cdc')),
    CONSTRAINT outbox_relay_report_problem_bounded CHECK (char_length(problem) <= 300),
    CONSTRAINT outbox_relay_report_published_not_negative CHECK (published >= 0)
);

COMMENT ON TABLE outbox_relay_report IS 'outboxkit: one row per running relay instance (polling or CDC, holder or standby), rewritten about once a second; deleted on a clean stop, and by the relays a day after it expired.';
COMMENT ON COLUMN outbox_relay_report.instance_id IS 'Relay instance id (the holder in outbox_relay_lease).';
COMMENT ON COLUMN outbox_relay_report.relay IS 'Which relay: poll (relay-poller) or cdc (relay-debezium).';
COMMENT ON COLUMN outbox_relay_report.host IS 'The host name the instance runs on, as it sees it.';
COMMENT ON COLUMN outbox_relay_report.started_at IS 'When the instance started (its own clock).';
COMMENT ON COLUMN outbox_relay_report.reported_at IS 'When the instance last wrote this row (the database clock).';
COMMENT ON COLUMN outbox_relay_report.expires_at IS 'After this instant the row counts as gone (the instance crashed, froze or lost the database): reported_at plus the lease duration.';
COMMENT ON COLUMN outbox_relay_report.ready IS 'The instance''s readiness when it wrote the row: it could publish now (or stands by, ready to take over).';
COMMENT ON COLUMN outbox_relay_report.problem IS 'Why it is not ready (its health detail, at most 300 characters, never a password); null when ready.';
COMMENT ON COLUMN outbox_relay_report.published IS 'Events this instance published (Kafka acknowledged) since it started.';
COMMENT ON COLUMN outbox_relay_report.last_published_at IS 'When Kafka last acknowledged an event of this instance (the database clock); null before its first.';
