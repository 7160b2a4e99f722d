package dev.outboxkit.writer.internal;

import dev.outboxkit.writer.WriteMode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;

/**
 * Not API: public for {@code dev.outboxkit.writer.OutboxWriter}.
 *
 * <p>The writer's meters; names are listed in outbox-writer/README.md, "Metrics".
 */
public final class WriterMetrics {

    public final Counter events;
    public final DistributionSummary payloadBytes;
    public final Timer writeRoundTrips;
    public final Timer flushRoundTrips;
    public final Timer commitRoundTrips;
    public final Counter rejectedInvalid;
    public final Counter rejectedTooLarge;
    public final Counter rejectedAutoCommit;
    public final Counter committed;
    public final Counter failed;
    public final Counter unknown;

    public WriterMetrics(MeterRegistry registry, WriteMode writeMode) {
        String mode = writeMode.name().toLowerCase(Locale.ROOT);
        events = Counter.builder("outbox.writer.events").description("Events sent to the database (committed or not)")
                .tag("mode", mode).register(registry);
        payloadBytes = DistributionSummary.builder("outbox.writer.payload.bytes").baseUnit("bytes")
                .description("Size of event payloads as JSON").tag("mode", mode).register(registry);
        writeRoundTrips = roundTrips(registry, mode, "write");
        flushRoundTrips = roundTrips(registry, mode, "flush");
        commitRoundTrips = roundTrips(registry, mode, "commit");
        rejectedInvalid = rejected(registry, "invalid_event");
        rejectedTooLarge = rejected(registry, "payload_too_large");
        rejectedAutoCommit = rejected(registry, "autocommit");
        committed = commits(registry, "committed");
        failed = commits(registry, "failed");
        unknown = commits(registry, "unknown");
    }

    private static Timer roundTrips(MeterRegistry registry, String mode, String operation) {
        return Timer.builder("outbox.writer.round.trips").description("Database round trips of the writer and their latency")
                .tag("mode", mode).tag("operation", operation).register(registry);
    }

    private static Counter rejected(MeterRegistry registry, String reason) {
        return Counter.builder("outbox.writer.rejected").description("Events or calls refused before reaching the database")
                .tag("reason", reason).register(registry);
    }

    private static Counter commits(MeterRegistry registry, String outcome) {
        return Counter.builder("outbox.writer.commits").description("Transactions the writer committed for the caller, by outcome")
                .tag("outcome", outcome).register(registry);
    }
}
