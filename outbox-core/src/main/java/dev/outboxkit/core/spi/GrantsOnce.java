package dev.outboxkit.core.spi;

import dev.outboxkit.core.MissingGrantsException;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Not API: {@link Grants} checked on the first connection a long-lived object is given and then never again, so the
 * check costs one round trip per object, not one per call. A failed check is not remembered: once the operator ran
 * the statements, the next call checks again and passes. Thread-safe; a few first calls may check in parallel.
 */
public final class GrantsOnce {

    private final Grants grants;
    private final String component;
    private volatile boolean held;

    /** {@code grants} null: nothing to check. */
    public GrantsOnce(Grants grants, String component) {
        this.grants = grants;
        this.component = component;
        this.held = grants == null;
    }

    /** @throws MissingGrantsException naming {@code component}, the role and the statements to run */
    public void require(Connection c) throws SQLException {
        if (!held) {
            grants.require(c, component);
            held = true;
        }
    }
}
