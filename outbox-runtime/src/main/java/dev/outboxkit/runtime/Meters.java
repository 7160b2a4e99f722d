package dev.outboxkit.runtime;

import dev.outboxkit.relay.RelayMetric;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.function.ToDoubleFunction;

/**
 * Not API: registers a relay's meters from the {@link RelayMetric} catalog (name, unit and description from there),
 * so neither relay spells a meter name itself.
 */
public final class Meters {

    private final MeterRegistry registry;
    private final String relay;
    private final Tags tags;

    /** Meters tagged {@code relay=<relay>} plus {@code extraTags}. */
    public Meters(MeterRegistry registry, String relay, Tags extraTags) {
        this.registry = registry;
        this.relay = relay;
        this.tags = Tags.of("relay", relay).and(extraTags);
    }

    public Counter counter(RelayMetric metric) {
        return counter(metric, Tags.empty());
    }

    /** One series of a counter that the catalog splits by a tag (e.g. {@code reason}). */
    public Counter counter(RelayMetric metric, Tags extra) {
        return Counter.builder(check(metric, RelayMetric.Kind.COUNTER).meterName()).tags(tags.and(extra))
                .baseUnit(unit(metric)).description(metric.description()).register(registry);
    }

    public Timer timer(RelayMetric metric) {
        return Timer.builder(check(metric, RelayMetric.Kind.TIMER).meterName()).tags(tags)
                .description(metric.description()).register(registry);
    }

    public DistributionSummary summary(RelayMetric metric) {
        return DistributionSummary.builder(check(metric, RelayMetric.Kind.SUMMARY).meterName()).tags(tags)
                .baseUnit(unit(metric)).description(metric.description()).register(registry);
    }

    /** A gauge of {@code state}, held strongly (the relay's state objects live as long as the relay). */
    public <T> void gauge(RelayMetric metric, T state, ToDoubleFunction<T> value) {
        Gauge.builder(check(metric, RelayMetric.Kind.GAUGE).meterName(), state, value).tags(tags).baseUnit(unit(metric))
                .description(metric.description()).strongReference(true).register(registry);
    }

    private RelayMetric check(RelayMetric metric, RelayMetric.Kind kind) {
        if (metric.kind() != kind || !metric.registeredBy(relay)) {
            throw new IllegalArgumentException(metric + " is a " + metric.kind() + " of " + metric.meterName()
                    + "; the catalog does not list it as a " + kind + " of relay " + relay);
        }
        return metric;
    }

    private static String unit(RelayMetric metric) {
        return metric.baseUnit().isEmpty() ? null : metric.baseUnit();
    }
}
