package dev.outboxkit.sql;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.Grants;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Applies the outboxkit schema ({@code classpath:db/outboxkit}) to one PostgreSQL schema with
 * Flyway. Its history lives in its own table, {@value #HISTORY_TABLE}, so it coexists with the
 * application's own Flyway history in the same schema. Applying twice is a no-op.
 */
public final class Migrations {

    public static final String LOCATION = "classpath:db/outboxkit";
    public static final String HISTORY_TABLE = "outboxkit_schema_history";
    public static final String DEFAULT_SCHEMA = OutboxTables.DEFAULT_SCHEMA;

    /** Tables the migrations create; finding one without our history means it is someone else's. */
    static final List<String> OWN_TABLES = List.of(OutboxTables.OUTBOX_EVENT, OutboxTables.DEAD_LETTER,
            OutboxTables.RELAY_LEASE, OutboxTables.IDEMPOTENCY_KEY, OutboxTables.IDEMPOTENCY_KEY_TOMBSTONE,
            OutboxTables.PROCESSED_EVENT, OutboxTables.EXTERNAL_EFFECT);

    private Migrations() {
    }

    /** What {@link #migrate} did. */
    public record Result(String schema, int applied, String version) {
    }

    /**
     * Brings {@code schema} (created if missing) up to the newest outboxkit version.
     *
     * @throws IllegalArgumentException when {@code schema} is not a legal identifier
     * @throws SchemaConflictException  when the schema holds an outboxkit table name that
     *                                  outboxkit did not create
     * @throws MissingGrantsException   before anything is changed, when the role may not create in the schema (or,
     *                                  while it does not exist, in the database) or, once a history exists, is not
     *                                  (a member of) the role that owns it, with the statements to run
     */
    public static Result migrate(DataSource dataSource, String schema) {
        return migrate(dataSource, schema, null);
    }

    /**
     * Brings {@code schema} up to outboxkit version {@code target} (for example {@code "9"}), no further: for an
     * upgrade in steps, where the writers and relays of one version must be running before the next
     * migration is applied. Null means the newest.
     *
     * @throws IllegalArgumentException when {@code schema} is not a legal identifier
     * @throws SchemaConflictException  as {@link #migrate(DataSource, String)}
     * @throws MissingGrantsException   as {@link #migrate(DataSource, String)}
     */
    public static Result migrate(DataSource dataSource, String schema, String target) {
        Identifiers.requireValid("schema", schema);
        refuseForeignTables(dataSource, schema);
        var config = configure(dataSource, schema);
        if (target != null) {
            config.target(target);
        }
        MigrateResult result = config.load().migrate();
        return new Result(schema, result.migrationsExecuted, result.targetSchemaVersion != null
                ? result.targetSchemaVersion : currentVersion(dataSource, schema));
    }

    /** The applied outboxkit version in {@code schema}, or null when none is. */
    public static String currentVersion(DataSource dataSource, String schema) {
        Identifiers.requireValid("schema", schema);
        var current = flyway(dataSource, schema).info().current();
        return current == null || current.getVersion() == null ? null : current.getVersion().getVersion();
    }

    private static Flyway flyway(DataSource dataSource, String schema) {
        return configure(dataSource, schema).load();
    }

    private static FluentConfiguration configure(DataSource dataSource, String schema) {
        return Flyway.configure(Migrations.class.getClassLoader())
                .dataSource(dataSource)
                .locations(LOCATION)
                .schemas(schema)
                .defaultSchema(schema)
                .createSchemas(true)
                .table(HISTORY_TABLE)
                // The schema may already hold the application's tables: start our history at 0.
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .placeholderReplacement(false)
                .validateMigrationNaming(true);
    }

    private static void refuseForeignTables(DataSource dataSource, String schema) {
        String sql = """
                SELECT table_name,
                       EXISTS (SELECT 1 FROM information_schema.tables
                                WHERE table_schema = ? AND table_name = ?) AS has_history
                  FROM information_schema.tables
                 WHERE table_schema = ? AND table_name = ANY (?)
                """;
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            // What this and every later migration needs: CREATE (new tables, or the schema itself), and the
            // tables' owner (ALTER TABLE) once there is a history.
            Grants.in(schema).create().ownerOf(HISTORY_TABLE).require(c, "outboxkit migration of schema " + schema);
            ps.setString(1, schema);
            ps.setString(2, HISTORY_TABLE);
            ps.setString(3, schema);
            ps.setArray(4, c.createArrayOf("text", OWN_TABLES.toArray()));
            List<String> foreign = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (!rs.getBoolean(2)) {
                        foreign.add(rs.getString(1));
                    }
                }
            }
            if (!foreign.isEmpty()) {
                throw new SchemaConflictException("schema \"" + schema + "\" already has " + String.join(", ", foreign)
                        + " but no outboxkit history table (" + HISTORY_TABLE + "): outboxkit did not create "
                        + (foreign.size() == 1 ? "it" : "them") + " and will not change "
                        + (foreign.size() == 1 ? "it" : "them") + ". Rename or drop "
                        + (foreign.size() == 1 ? "that table" : "those tables")
                        + ", or install outboxkit into another schema (--schema / OUTBOX_SCHEMA).");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not inspect schema \"" + schema + "\": " + e.getMessage(), e);
        }
    }
}
