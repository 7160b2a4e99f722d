CREATE TABLE IF NOT EXISTS account (id text PRIMARY KEY, balance bigint NOT NULL);
CREATE TABLE IF NOT EXISTS transfer (id uuid PRIMARY KEY, from_account text NOT NULL, to_account text NOT NULL,
                                     amount bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS received_total (account text PRIMARY KEY, total bigint NOT NULL);
INSERT INTO account VALUES ('alice', 1000), ('bob', 0) ON CONFLICT DO NOTHING;
