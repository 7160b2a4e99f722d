package dev.outboxkit.cli;

import java.util.List;

/**
 * Subcommands that are not part of the sidecar artifact, found on the class path with {@link java.util.ServiceLoader}:
 * {@code outbox-dev-tools} provides {@code dev} and {@code demo} (the embedded PostgreSQL and Kafka of the testkit).
 * Without a provider, as in {@code outbox.jar} and the container image, those names answer with {@link NotInThisJar}.
 */
public interface CommandProvider {

    /** picocli {@code @Command} classes, each named one of {@link Main#DEV_TOOLS_COMMANDS}. */
    List<Class<?>> commands();
}
