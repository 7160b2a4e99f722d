/**
 * The outboxkit schema as versioned migrations, applied with {@link dev.outboxkit.sql.Migrations}, which refuses
 * a schema holding tables with outboxkit's names that it did not create
 * ({@link dev.outboxkit.sql.SchemaConflictException}).
 */
package dev.outboxkit.sql;
