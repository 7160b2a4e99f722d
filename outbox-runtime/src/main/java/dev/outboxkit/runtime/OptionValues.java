package dev.outboxkit.runtime;

import dev.outboxkit.relay.RelayOption;
import java.util.HashMap;
import java.util.Map;

/**
 * Not API: how a relay's configuration reads its builder's {@link RelayOption}s ({@code RelayBuilder::get}: the value
 * set, else the option's default), so the configuration is built from the option catalog by name, never by position.
 */
@FunctionalInterface
public interface OptionValues {

    /** The value of {@code option}: the one set (checked when set), else its default; null for one without either. */
    <T> T get(RelayOption<T> option);

    /**
     * The values in {@code set}, each checked by its option now, and every other option's default: a relay's
     * configuration without its builder (tests, the benchmarks' {@code DebeziumAlone}).
     *
     * @throws IllegalArgumentException for a value its option refuses
     */
    static OptionValues of(Map<RelayOption<?>, Object> set) {
        Map<RelayOption<?>, Object> checked = new HashMap<>();
        set.forEach((option, value) -> checked.put(option, checkedValue(option, value)));
        return new OptionValues() {
            @Override
            public <T> T get(RelayOption<T> option) {
                Object value = checked.get(option);
                return value != null ? option.type().cast(value) : option.defaultValue();
            }
        };
    }

    private static <T> T checkedValue(RelayOption<T> option, Object value) {
        return option.check(option.type().cast(value));
    }
}
