/**
 * The {@code outbox} command ({@link dev.outboxkit.cli.Main}): the relay sidecars, migrations, status, dead letters,
 * replay, reconciliation and purges, built on picocli. Its API is the command line (commands, options, environment
 * variables, exit codes, the sidecar's HTTP endpoints), not these classes: the few public ones are public for
 * {@code outbox-dev-tools}, which adds {@code outbox dev} and {@code outbox demo} through
 * {@link dev.outboxkit.cli.CommandProvider}.
 */
package dev.outboxkit.cli;
