package dev.outboxkit.core.internal;

import dev.outboxkit.core.RelayOption;

/**
 * Not API: how a relay's configuration reads its builder's {@link RelayOption}s ({@code RelayBuilder::get}: the value
 * set, else the option's default), so the configuration is built from the option catalog by name, never by position.
 */
@FunctionalInterface
public interface OptionValues {

    /** The value of {@code option}: the one set (checked when set), else its default; null for one without either. */
    <T> T get(RelayOption<T> option);
}
