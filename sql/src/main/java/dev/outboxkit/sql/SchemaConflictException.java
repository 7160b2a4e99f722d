package dev.outboxkit.sql;

/** The target schema holds tables with outboxkit's names that outboxkit did not create. */
public class SchemaConflictException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public SchemaConflictException(String message) {
        super(message);
    }
}
