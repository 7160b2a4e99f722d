package dev.outboxkit.relay;

import dev.outboxkit.core.Secret;

/** A configuration value that would weaken a guarantee; the message names the key and why. */
public class UnsafeConfigurationException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String key;

    public UnsafeConfigurationException(String key, String value, String why) {
        super("unsafe setting " + key + "=" + Secret.printable(key, value) + ": " + why);
        this.key = key;
    }

    /** The configuration key that was refused. */
    public String key() {
        return key;
    }
}
