package dev.outboxkit.console.internal;

import dev.outboxkit.core.Secret;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.relay.Relay;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Not API: what {@code Console.Builder} resolved.
 *
 * @param operatorName  who the operator token logs in as; null: no built-in login
 * @param relayHealth   null: no relay in this process
 * @param relayMeters   the registry the relays of this process record into; null: none given
 * @param traceUrl      the tracing UI's URL of a trace, with {@code {traceId}} once (checked); null: no link
 */
public record ConsoleSettings(OutboxAdmin admin, String basePath, boolean writeActions, boolean showPayloads,
                              String operatorName, Secret operatorToken, Supplier<Relay.Health> relayHealth,
                              MeterRegistry relayMeters, Duration sessionLifetime,
                              String traceUrl) {
}
