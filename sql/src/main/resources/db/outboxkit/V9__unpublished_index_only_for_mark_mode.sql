-- outboxkit schema, version 9: the partial index outbox_event_unpublished is only for relays that MARK
-- rows published instead of deleting them.
--
-- With the default (delete after publish) every row in outbox_event is unpublished, so the partial
-- index holds exactly what the primary key holds: every writer paid for a second index insert and
-- about 66 bytes of WAL per event (10 % of an event's WAL) for nothing. Measured with
-- WriterTaxBenchmark (outbox-writer): outbox WAL per 5-event transaction 3,308 B -> 2,976 B.
--
-- A schema that already has published rows kept (a MARK-mode relay ran here) keeps the index. A
-- MARK-mode polling relay refuses to start without it and prints the statement that creates it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM outbox_event WHERE published_at IS NOT NULL) THEN
        DROP INDEX outbox_event_unpublished;
    END IF;
END
$$;
