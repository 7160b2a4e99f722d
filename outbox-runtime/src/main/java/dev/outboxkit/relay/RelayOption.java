package dev.outboxkit.relay;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.TopicRoute;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * One relay setting, defined once: its name, type, default, the values it accepts and what it does. The relay
 * builders take their defaults and checks from here, and everything that configures a relay from text derives from
 * it: the CLI's flag ({@code --lease-duration}), environment variable ({@code OUTBOX_LEASE_DURATION}) and config-file
 * key ({@code lease-duration=}), the Spring Boot property ({@code outboxkit.relay.options.lease-duration}) and the generated
 * configuration reference. The definitions are constants of {@link RelayOptions} (settings both relays share),
 * {@code PollerOptions} and {@code CdcOptions}. Every definition states its {@link Importance}: references list the
 * essentials first, then the tuning settings, then the rest.
 *
 * <p>Immutable and thread-safe.
 *
 * @param <T> the value's type
 */
public final class RelayOption<T> {

    /**
     * How much a deployment needs a setting; references list the groups in this order. Each definition names its
     * group (there is no default), so a new option has to choose one.
     */
    public enum Importance {
        /** What every deployment sets or decides: which schema, slot and topics, how instances share the work. */
        ESSENTIAL("essential"),
        /** Throughput, latency and resources (batch sizes, loops, delays, bounds in flight): change after measuring. */
        TUNING("tuning"),
        /** Behaviour switches and timeouts whose defaults suit nearly every deployment. */
        RARELY_NEEDED("rarely needed");

        private final String label;

        Importance(String label) {
            this.label = label;
        }

        /** The group's name in references: {@code essential}, {@code tuning}, {@code rarely needed}. */
        public String label() {
            return label;
        }
    }

    private final String name;
    private final Importance importance;
    private final Class<T> type;
    private final T defaultValue;
    private final String defaultText;
    private final String doc;
    private final Function<String, T> parser;
    private final Function<T, String> formatter;
    private final Function<T, String> problem;
    private final String accepted;

    private RelayOption(String name, Importance importance, Class<T> type, T defaultValue, String defaultText,
                        String doc, Function<String, T> parser, Function<T, String> formatter,
                        Function<T, String> problem, String accepted) {
        this.name = Objects.requireNonNull(name);
        this.importance = Objects.requireNonNull(importance, name + ": importance");
        this.type = Objects.requireNonNull(type);
        this.defaultValue = defaultValue;
        this.defaultText = defaultText;
        this.doc = Objects.requireNonNull(doc);
        this.parser = parser;
        this.formatter = formatter;
        this.problem = problem;
        this.accepted = accepted;
        if (defaultValue != null) {
            check(defaultValue); // a definition whose default it refuses is a bug, found at class load
        }
    }

    /** The builder method's name, for example {@code leaseDuration}. */
    public String name() {
        return name;
    }

    /** The name in text configuration: {@code leaseDuration} → {@code lease-duration}. */
    public String kebabName() {
        return name.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    /** Its group in references: essential, tuning or rarely needed. */
    public Importance importance() {
        return importance;
    }

    public Class<T> type() {
        return type;
    }

    /** The default, or null when the setting has none (required, or computed at build time: see {@link #defaultText()}). */
    public T defaultValue() {
        return defaultValue;
    }

    /** The default as a user would type it, or how it is computed; empty when the setting is required. */
    public String defaultText() {
        return defaultValue != null ? format(defaultValue) : defaultText == null ? "" : defaultText;
    }

    /**
     * What the setting does, in one or two sentences, with no measured figures (those are in docs/performance.md,
     * which the text may point to).
     */
    public String doc() {
        return doc;
    }

    /** The values it accepts, for example {@code PT2S to PT10M} or {@code DELETE, MARK}. */
    public String accepted() {
        return accepted;
    }

    /** The definition's one line for references: doc, accepted values. */
    public String description() {
        return accepted.isEmpty() ? doc : doc + " Accepted: " + accepted + ".";
    }

    /**
     * Parses the text form and checks it.
     *
     * @throws IllegalArgumentException naming the setting, the text and the expected form
     */
    public T parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException(name + " must not be empty");
        }
        T value;
        try {
            value = parser.apply(text.trim());
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw new IllegalArgumentException(name + ": '" + text + "' is not valid (" + accepted + "): "
                    + e.getMessage(), e);
        }
        return check(value);
    }

    /**
     * Returns {@code value} if the setting accepts it.
     *
     * @throws IllegalArgumentException naming the setting, the rule and the value, e.g. "leaseDuration must be
     *                                  between PT2S and PT10M, got PT1S"
     */
    public T check(T value) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        String wrong = problem.apply(value);
        if (wrong != null) {
            throw new IllegalArgumentException(wrong);
        }
        return value;
    }

    /** The text form {@link #parse} reads back. */
    public String format(T value) {
        return formatter.apply(value);
    }

    @Override
    public String toString() {
        return "RelayOption[" + name + "]";
    }

    // Factories, one per kind of value, for the catalogs (RelayOptions, PollerOptions, CdcOptions).

    /** A duration setting, from {@code min} to {@code max}. */
    public static RelayOption<Duration> duration(String name, Importance importance, Duration defaultValue, Duration min,
                                                 Duration max, String doc) {
        return new RelayOption<>(name, importance, Duration.class, defaultValue, null, doc, Duration::parse,
                Duration::toString,
                d -> d.compareTo(min) < 0 || d.compareTo(max) > 0
                        ? name + " must be between " + min + " and " + max + ", got " + d : null,
                "an ISO-8601 duration from " + min + " to " + max);
    }

    /** A whole-number setting, from {@code min} to {@code max}. */
    public static RelayOption<Integer> integer(String name, Importance importance, int defaultValue, int min, int max,
                                               String doc) {
        return integer(name, importance, defaultValue, null, min, max, doc);
    }

    /**
     * A whole-number setting, from {@code min} to {@code max}, whose default the relay computes at build time from its
     * other settings when it is not set ({@code computedDefault} says how, for references). Unset, it is absent from
     * text configuration too, so only a value the user gives is checked against the other settings.
     */
    public static RelayOption<Integer> computedInteger(String name, Importance importance, String computedDefault,
                                                       int min, int max, String doc) {
        return integer(name, importance, null, Objects.requireNonNull(computedDefault), min, max, doc);
    }

    private static RelayOption<Integer> integer(String name, Importance importance, Integer defaultValue,
                                                String defaultText, int min, int max, String doc) {
        return new RelayOption<>(name, importance, Integer.class, defaultValue, defaultText, doc, Integer::valueOf,
                String::valueOf,
                n -> n < min || n > max ? name + " must be between " + min + " and " + max + ", got " + n : null,
                min + " to " + max);
    }

    /** A yes/no setting ({@code true}/{@code false}, also {@code yes}/{@code no}, {@code on}/{@code off}). */
    public static RelayOption<Boolean> flag(String name, Importance importance, boolean defaultValue, String doc) {
        return new RelayOption<>(name, importance, Boolean.class, defaultValue, null, doc, RelayOption::parseBoolean,
                String::valueOf, b -> null, "true or false");
    }

    /** One of an enum's constants (text: its name, case-insensitive, dashes for underscores). */
    public static <E extends Enum<E>> RelayOption<E> choice(String name, Importance importance, Class<E> type,
                                                           E defaultValue, String doc) {
        String names = Arrays.stream(type.getEnumConstants()).map(Enum::name).collect(Collectors.joining(", "));
        return new RelayOption<>(name, importance, type, defaultValue, null, doc,
                s -> Enum.valueOf(type, s.toUpperCase(Locale.ROOT).replace('-', '_')), Enum::name, e -> null, names);
    }

    /** A PostgreSQL identifier ({@link Identifiers#requireValid}). */
    public static RelayOption<String> identifier(String name, Importance importance, String defaultValue, String doc) {
        return new RelayOption<>(name, importance, String.class, defaultValue, null, doc, s -> s, s -> s,
                s -> problemOf(() -> Identifiers.requireValid(name, s)), Identifiers.RULE);
    }

    /** An instance name ({@link Identifiers#requireInstanceId}); without a value one is computed. */
    public static RelayOption<String> instanceId(String name, Importance importance, String computedDefault,
                                                 String doc) {
        return new RelayOption<>(name, importance, String.class, null, computedDefault, doc, s -> s, s -> s,
                s -> problemOf(() -> Identifiers.requireInstanceId(name, s)), Identifiers.INSTANCE_ID_RULE);
    }

    /** A topic route template ({@link TopicRoute#of}). */
    public static RelayOption<TopicRoute> route(String name, Importance importance, String doc) {
        return new RelayOption<>(name, importance, TopicRoute.class, TopicRoute.defaultRoute(), null, doc,
                TopicRoute::of, TopicRoute::template, r -> null,
                "a topic name in which ${aggregateType} and ${eventType} are filled in");
    }

    /** A CloudEvents source template ({@link TopicRoute#checkSource}). */
    public static RelayOption<String> cloudEventsSource(String name, Importance importance, String defaultValue,
                                                        String doc) {
        return new RelayOption<>(name, importance, String.class, defaultValue, null, doc, s -> s, s -> s,
                s -> {
                    String problem = problemOf(() -> TopicRoute.checkSource(s));
                    return problem == null ? null : name + ": " + problem;
                },
                "a URI reference in which ${aggregateType} and ${eventType} are filled in");
    }

    private static String problemOf(Runnable check) {
        try {
            check.run();
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    private static Boolean parseBoolean(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on" -> Boolean.TRUE;
            case "false", "no", "off" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("expected true or false");
        };
    }
}
