/**
 * The outboxkit schema as versioned migrations, applied with {@link dev.outboxkit.sql.Migrations}.
 */
package dev.outboxkit.sql;
