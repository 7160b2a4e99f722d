-- outboxkit schema, version 5: the consumer side (consumer-dedupe) beyond processed_event.
-- Applied with search_path set to the target schema: no name below is schema-qualified on purpose.

-- ---------------------------------------------------------------------------------------------
-- external_effect: effects that leave the database (an e-mail, an HTTP call to a partner) cannot
-- join the consumer's transaction. They are claimed here first (committed on their own), then
-- performed with the event id as the downstream idempotency key, then their outcome is recorded.
-- A claim whose outcome nobody recorded stays visible for reconciliation; it is never guessed.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE external_effect (
    effect_name text        NOT NULL,
    event_id    uuid        NOT NULL,
    state       text        NOT NULL,
    attempt     integer     NOT NULL DEFAULT 1,
    holder      text        NOT NULL,
    claimed_at  timestamptz NOT NULL,
    lease_until timestamptz NOT NULL,
    finished_at timestamptz,
    outcome     text,
    error       text,
    PRIMARY KEY (effect_name, event_id),
    CONSTRAINT external_effect_state_known CHECK (state IN ('in_progress', 'succeeded', 'failed', 'unknown')),
    CONSTRAINT external_effect_name_present CHECK (effect_name <> ''),
    CONSTRAINT external_effect_attempt_positive CHECK (attempt >= 1)
);
-- Reconciliation lists open claims (unknown, or in progress with an expired lease).
CREATE INDEX external_effect_open ON external_effect (lease_until) WHERE state IN ('in_progress', 'unknown');

COMMENT ON TABLE external_effect IS 'outboxkit: claims of effects outside the database (e-mail, partner HTTP calls), one per effect and event; an unknown outcome stays here for reconciliation.';
COMMENT ON COLUMN external_effect.effect_name IS 'Which effect, for example send-welcome-mail; one event may cause several effects.';
COMMENT ON COLUMN external_effect.event_id IS 'The event that caused the effect; handed downstream as the idempotency key.';
COMMENT ON COLUMN external_effect.state IS 'in_progress (claimed, lease running), succeeded, failed (known terminal refusal) or unknown (nobody knows whether it happened: reconcile).';
COMMENT ON COLUMN external_effect.attempt IS 'Claim number, raised by every explicit takeover; recording an outcome checks it, so a stale holder cannot overwrite a newer attempt.';
COMMENT ON COLUMN external_effect.holder IS 'Instance that holds (or last held) the claim.';
COMMENT ON COLUMN external_effect.claimed_at IS 'When the current attempt claimed the effect.';
COMMENT ON COLUMN external_effect.lease_until IS 'An in_progress claim whose lease passed without an outcome counts as unknown.';
COMMENT ON COLUMN external_effect.finished_at IS 'When the outcome (succeeded, failed, unknown) was recorded.';
COMMENT ON COLUMN external_effect.outcome IS 'What the downstream answered on success (for example its reference), for audit and replay.';
COMMENT ON COLUMN external_effect.error IS 'Why the effect failed, or why its outcome is unknown.';

-- ---------------------------------------------------------------------------------------------
-- processed_event: the retention purge is the only reader of processed_at. A BRIN index serves
-- it (rows arrive in processed_at order) at a fraction of the cost of the btree from V1, which
-- every consumed event had to maintain.
-- ---------------------------------------------------------------------------------------------
DROP INDEX processed_event_age;
CREATE INDEX processed_event_processed_at ON processed_event USING brin (processed_at);
COMMENT ON INDEX processed_event_processed_at IS 'outboxkit: finds processed ids older than the retention window for the purge.';
