package dev.outboxkit.consumer;

import dev.outboxkit.core.Identifiers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Writes to a resource that is acted on under a lease, guarded by a fencing token: the update
 * applies only when the row's fence is lower than the writer's, and stores the writer's fence.
 *
 * <pre>{@code
 * UPDATE "public"."resource" SET "owner" = ?, "state" = ?, "fence" = ?
 *  WHERE "id" = ? AND ("fence" IS NULL OR "fence" < ?)
 * }</pre>
 *
 * Zero rows means a writer with a newer (or the same) token got there first — a paused process
 * that lost its lease cannot overwrite its successor — or that the row does not exist. The same
 * token is refused by default, so using a monotonic event position (an offset, an aggregate
 * version) as the fence also makes a replayed write a no-op; {@link #acceptingEqualFence()} lets a
 * lease holder write several times under one token.
 *
 * <p>Table and column names are validated ({@link Identifiers}: lower-case letters, digits,
 * {@code _}) and quoted; values travel as bind parameters only.
 */
public final class FencedWrites {

    private final String schema;
    private final String table;
    private final String idColumn;
    private final String fenceColumn;
    private final boolean acceptEqual;

    private FencedWrites(String schema, String table, String idColumn, String fenceColumn, boolean acceptEqual) {
        this.schema = Identifiers.requireValid("schema", schema);
        this.table = Identifiers.requireValid("table", table);
        this.idColumn = Identifiers.requireValid("idColumn", idColumn);
        this.fenceColumn = Identifiers.requireValid("fenceColumn", fenceColumn);
        if (idColumn.equals(fenceColumn)) {
            throw new IllegalArgumentException("idColumn and fenceColumn must differ, both are '" + idColumn + "'");
        }
        this.acceptEqual = acceptEqual;
    }

    /** Fenced writes to {@code schema.table} with columns {@code id} and {@code fence} (a bigint, nullable). */
    public static FencedWrites on(String schema, String table) {
        return new FencedWrites(schema, table, "id", "fence", false);
    }

    /** The same writes keyed by another column. */
    public FencedWrites idColumn(String column) {
        return new FencedWrites(schema, table, column, fenceColumn, acceptEqual);
    }

    /** The same writes with the token in another column. */
    public FencedWrites fenceColumn(String column) {
        return new FencedWrites(schema, table, idColumn, column, acceptEqual);
    }

    /** Also apply when the row already carries the writer's token ({@code fence <= ?}): one lease, several writes. */
    public FencedWrites acceptingEqualFence() {
        return new FencedWrites(schema, table, idColumn, fenceColumn, true);
    }

    /**
     * One-call form with the default columns {@code id} and {@code fence}.
     *
     * @see #update(Connection, Object, long, Map)
     */
    public static boolean update(Connection c, String schema, String table, Object id, long fence, Map<String, ?> values)
            throws SQLException {
        return on(schema, table).update(c, id, fence, values);
    }

    /**
     * Sets {@code values} (column → value, in map order) and the fence on the row {@code id}, if
     * the row's fence is lower than {@code fence} (or null). Runs in the connection's current
     * transaction.
     *
     * @return true when the row was updated; false when a newer authority owns it or the row does not exist
     * @throws IllegalArgumentException when a column name is illegal or names the id or fence column
     * @throws IllegalStateException    when more than one row has that id
     */
    public boolean update(Connection c, Object id, long fence, Map<String, ?> values) throws SQLException {
        Objects.requireNonNull(c, "connection");
        Objects.requireNonNull(id, "id");
        Map<String, ?> ordered = values == null ? Map.of() : new LinkedHashMap<>(values);
        try (PreparedStatement ps = c.prepareStatement(sql(new ArrayList<>(ordered.keySet())))) {
            int i = 1;
            for (Object value : ordered.values()) {
                ps.setObject(i++, value);
            }
            ps.setLong(i++, fence);
            ps.setObject(i++, id);
            ps.setLong(i, fence);
            int rows = ps.executeUpdate();
            if (rows > 1) {
                throw new IllegalStateException("fenced update of " + schema + "." + table + " changed " + rows
                        + " rows for " + idColumn + "=" + id + "; the id column must be unique");
            }
            return rows == 1;
        }
    }

    /** The statement for {@code columns}, for review and logs. */
    public String sql(List<String> columns) {
        StringBuilder set = new StringBuilder();
        for (String column : columns) {
            Identifiers.requireValid("column", column);
            if (column.equals(idColumn) || column.equals(fenceColumn)) {
                throw new IllegalArgumentException("column '" + column + "' is the " + (column.equals(idColumn) ? "id" : "fence")
                        + " column and cannot be set by a fenced update");
            }
            set.append(Identifiers.quote("column", column)).append(" = ?, ");
        }
        String fence = Identifiers.quote("fenceColumn", fenceColumn);
        return "UPDATE " + Identifiers.qualified(schema, table) + " SET " + set + fence + " = ?"
                + " WHERE " + Identifiers.quote("idColumn", idColumn) + " = ?"
                + " AND (" + fence + " IS NULL OR " + fence + (acceptEqual ? " <= ?)" : " < ?)");
    }
}
