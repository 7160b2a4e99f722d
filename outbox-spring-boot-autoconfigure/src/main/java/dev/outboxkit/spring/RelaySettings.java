package dev.outboxkit.spring;

import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.RelayBuilder;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOptions;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.env.Environment;

/**
 * Turns {@code outboxkit.relay.*} into a relay builder's settings. {@code outboxkit.relay.options.<name>} binds to the
 * relay's option definitions ({@link RelayOption}: the shared {@code RelayOptions} and the relay's own), by the
 * kebab-case name the {@code outbox relay} command uses, with the definition's default and check; durations also
 * take Spring's style ({@code 15s}, {@code 100ms}). An unknown name fails start-up with the list of known ones.
 * {@code producer.<kafka setting>} options become producer overrides.
 */
final class RelaySettings {

    final OutboxkitProperties.Relay relay;
    final String schema;
    final String bootstrapServers;
    final String jdbcUrl;
    final String username;
    final String password;
    final MeterRegistry meterRegistry;
    /** Hands the application's OpenTelemetry to the builder; null when there is none (or no API on the class path). */
    final RelayTracing tracing;

    RelaySettings(OutboxkitProperties properties, Environment env, MeterRegistry meterRegistry, RelayTracing tracing) {
        this.relay = properties.getRelay();
        this.schema = properties.getSchema();
        this.bootstrapServers = firstSet(relay.getBootstrapServers(), env.getProperty("spring.kafka.bootstrap-servers"),
                "outboxkit.relay.bootstrap-servers (or spring.kafka.bootstrap-servers)");
        this.jdbcUrl = firstSet(relay.getJdbcUrl(), env.getProperty("spring.datasource.url"),
                "outboxkit.relay.jdbc-url (or spring.datasource.url)");
        this.username = relay.getUsername() != null ? relay.getUsername() : env.getProperty("spring.datasource.username");
        this.password = relay.getPassword() != null ? relay.getPassword() : env.getProperty("spring.datasource.password");
        this.meterRegistry = meterRegistry;
        this.tracing = tracing;
    }

    /** Applies the connection settings and every {@code outboxkit.relay.options.*} entry to {@code builder}. */
    <B extends RelayBuilder<B>> B configure(B builder) {
        builder.schema(schema).bootstrapServers(bootstrapServers).jdbcUrl(jdbcUrl).user(username);
        if (password != null) {
            builder.password(Secret.of(password));
        }
        Map<String, RelayOption<?>> known = new TreeMap<>();
        builder.options().stream().filter(o -> o != RelayOptions.SCHEMA).forEach(o -> known.put(o.kebabName(), o));
        Map<String, String> producer = new LinkedHashMap<>();
        Set<String> unknown = new TreeSet<>();
        relay.getOptions().forEach((name, value) -> {
            if (name.startsWith("producer.")) {
                producer.put(name.substring("producer.".length()), value);
            } else if (known.containsKey(name)) {
                set(builder, known.get(name), value);
            } else {
                unknown.add(name);
            }
        });
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown outboxkit.relay.options for mode " + relay.getMode().name()
                    .toLowerCase(Locale.ROOT) + ": " + unknown + "; known: " + known.keySet()
                    + " and producer.<kafka setting> (the schema is outboxkit.schema)");
        }
        if (!producer.isEmpty()) {
            builder.producerOverrides(producer);
        }
        if (tracing != null) {
            tracing.applyTo(builder);
        }
        return builder;
    }

    private static <T> void set(RelayBuilder<?> builder, RelayOption<T> option, String text) {
        try {
            T value = option.type() == Duration.class
                    ? option.check(option.type().cast(DurationStyle.detectAndParse(text.trim())))
                    : option.parse(text);
            builder.set(option, value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("outboxkit.relay.options." + option.kebabName() + ": " + e.getMessage()
                    + " (accepted: " + option.accepted() + ")", e);
        }
    }

    private static String firstSet(String value, String fallback, String what) {
        String v = value != null && !value.isBlank() ? value : fallback;
        if (v == null || v.isBlank()) {
            throw new IllegalStateException("outboxkit.relay.mode is set, but " + what + " is not: the relay needs it");
        }
        return v;
    }
}
