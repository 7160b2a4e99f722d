package dev.outboxkit.cli;

/** A configuration problem found while a command runs (exit status 2); the message names the option. */
final class ConfigurationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ConfigurationException(String message) {
        super(message);
    }
}
