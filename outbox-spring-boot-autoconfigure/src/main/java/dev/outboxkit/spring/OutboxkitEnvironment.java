package dev.outboxkit.spring;

import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Puts the relay's health indicator into Actuator's readiness group when a relay runs here and
 * the application has not defined that group itself: a pod whose relay cannot publish is taken
 * out of service (and turns on the liveness and readiness probes unless the application set
 * {@code management.endpoint.health.probes.enabled}). Lowest precedence, so any setting of the
 * application wins. Not API.
 */
final class OutboxkitEnvironment implements EnvironmentPostProcessor {

    static final String READINESS_INCLUDE = "management.endpoint.health.group.readiness.include";
    static final String PROBES = "management.endpoint.health.probes.enabled";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        String mode = environment.getProperty("outboxkit.relay.mode", "none").trim();
        if (mode.equalsIgnoreCase("none") || environment.containsProperty(READINESS_INCLUDE)) {
            return;
        }
        // The group names readinessState, which exists only with the probes on: turn them on unless the application decided.
        Map<String, Object> defaults = new java.util.HashMap<>();
        defaults.put(READINESS_INCLUDE, "readinessState,outboxRelay");
        if (!environment.containsProperty(PROBES)) {
            defaults.put(PROBES, "true");
        }
        environment.getPropertySources().addLast(new MapPropertySource("outboxkit-defaults", defaults));
    }
}
