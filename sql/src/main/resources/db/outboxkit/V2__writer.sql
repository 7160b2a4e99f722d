-- outboxkit schema, version 2: what the writer's idempotency keys need beyond version 1.
-- Applied with search_path set to the target schema: no name below is schema-qualified on purpose.

-- A fencing number for idempotency-key claims. Each claim (the first one, and each takeover after
-- a lease expired or was released) increments it; storing the outcome and releasing the claim
-- both check it, so a holder whose lease was taken over can no longer complete or release the key.
ALTER TABLE idempotency_key ADD COLUMN attempt integer NOT NULL DEFAULT 1;
ALTER TABLE idempotency_key ADD CONSTRAINT idempotency_key_attempt_positive CHECK (attempt > 0);
COMMENT ON COLUMN idempotency_key.attempt IS 'Claim number: 1 for the first request, +1 for every retry that took over an expired or released claim; completing or releasing the key requires the current number (a fence against stale holders).';

-- locked_until NULL on an in_progress key now means: the last attempt failed transiently and
-- released its claim, so the next retry with the same request may claim the key at once.
COMMENT ON COLUMN idempotency_key.locked_until IS 'Lease of an in_progress claim; after it a retry may take over from a crashed holder. NULL while in_progress: the claim was released after a transient failure and the next retry may run at once.';
