package dev.outboxkit.relay;

/**
 * A relay refused to start because its database connections pass through a connection pooler (PgBouncer and the like)
 * it cannot run on: the polling relay refuses transaction and statement pooling, the CDC relay any pooler. Found right
 * after its first contact with the database, before it took a lease or published anything. The message says what was
 * detected, at which address, what would break and the setting that fixes it. Not retriable: the sidecar exits 2
 * (a configuration error).
 */
public class ConnectionPoolerException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public ConnectionPoolerException(String message) {
        super(message);
    }
}
