-- An application script that needs the outboxkit tables: it runs only after outboxkit's migration.
CREATE TABLE app_audit (event_id uuid REFERENCES outbox_dead_letter (id));
