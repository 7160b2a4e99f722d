package dev.outboxkit.spring;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.internal.RelayBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.env.Environment;

/**
 * Turns {@code outboxkit.relay.*} into a relay builder's settings. The options shared by both
 * relays are applied here; each relay's own ones by {@link PollRelays} and {@link CdcRelays}.
 * Options are kebab-case names as the {@code outbox relay} command spells them; an unknown one
 * fails start-up with the list of known ones. {@code producer.<kafka setting>} options become
 * producer overrides.
 */
final class RelaySettings {

    static final Set<String> SHARED = Set.of("instance-id", "lease-duration");

    final OutboxkitProperties.Relay relay;
    final String schema;
    final String bootstrapServers;
    final String jdbcUrl;
    final String username;
    final String password;
    final MeterRegistry meterRegistry;

    RelaySettings(OutboxkitProperties properties, Environment env, MeterRegistry meterRegistry) {
        this.relay = properties.getRelay();
        this.schema = properties.getSchema();
        this.bootstrapServers = firstSet(relay.getBootstrapServers(), env.getProperty("spring.kafka.bootstrap-servers"),
                "outboxkit.relay.bootstrap-servers (or spring.kafka.bootstrap-servers)");
        this.jdbcUrl = firstSet(relay.getJdbcUrl(), env.getProperty("spring.datasource.url"),
                "outboxkit.relay.jdbc-url (or spring.datasource.url)");
        this.username = relay.getUsername() != null ? relay.getUsername() : env.getProperty("spring.datasource.username");
        this.password = relay.getPassword() != null ? relay.getPassword() : env.getProperty("spring.datasource.password");
        this.meterRegistry = meterRegistry;
    }

    /** Applies the shared settings and options; returns the options left for the relay itself. */
    <B extends RelayBuilder<B>> Map<String, String> applyShared(B builder, Set<String> own) {
        builder.schema(schema).bootstrapServers(bootstrapServers).jdbcUrl(jdbcUrl).user(username);
        if (password != null) {
            builder.password(Secret.of(password));
        }
        Map<String, String> producer = new LinkedHashMap<>();
        Map<String, String> rest = new LinkedHashMap<>();
        Set<String> unknown = new TreeSet<>();
        relay.getOptions().forEach((name, value) -> {
            if (name.startsWith("producer.")) {
                producer.put(name.substring("producer.".length()), value);
            } else if (name.equals("instance-id")) {
                builder.instanceId(value);
            } else if (name.equals("lease-duration")) {
                builder.leaseDuration(duration(name, value));
            } else if (own.contains(name)) {
                rest.put(name, value);
            } else {
                unknown.add(name);
            }
        });
        if (!unknown.isEmpty()) {
            Set<String> known = new TreeSet<>(SHARED);
            known.addAll(own);
            throw new IllegalArgumentException("unknown outboxkit.relay.options for mode " + relay.getMode().name()
                    .toLowerCase(java.util.Locale.ROOT) + ": " + unknown + "; known: " + known + " and producer.<kafka setting>");
        }
        if (!producer.isEmpty()) {
            builder.producerOverrides(producer);
        }
        return rest;
    }

    static Duration duration(String name, String value) {
        try {
            return DurationStyle.detectAndParse(value.trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("outboxkit.relay.options." + name + " must be a duration such as 15s or "
                    + "PT15S, got '" + value + "'", e);
        }
    }

    static int integer(String name, String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("outboxkit.relay.options." + name + " must be a whole number, got '" + value + "'", e);
        }
    }

    static boolean bool(String name, String value) {
        String v = value.trim().toLowerCase(java.util.Locale.ROOT);
        if (!v.equals("true") && !v.equals("false")) {
            throw new IllegalArgumentException("outboxkit.relay.options." + name + " must be true or false, got '" + value + "'");
        }
        return v.equals("true");
    }

    private static String firstSet(String value, String fallback, String what) {
        String v = value != null && !value.isBlank() ? value : fallback;
        if (v == null || v.isBlank()) {
            throw new IllegalStateException("outboxkit.relay.mode is set, but " + what + " is not: the relay needs it");
        }
        return v;
    }
}
