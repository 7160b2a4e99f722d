package dev.outboxkit.relay.cdc.internal;

import io.debezium.engine.spi.OffsetCommitPolicy;
import java.time.Duration;

/**
 * When Debezium flushes the offsets it was told are processed: every {@code offsetFlushInterval},
 * and at once when the relay stops gracefully. The interval bounds the replay after a crash.
 */
final class FlushPolicy implements OffsetCommitPolicy {

    private final Duration interval;
    private volatile boolean force;

    FlushPolicy(Duration interval) {
        this.interval = interval;
    }

    void forceNext() {
        force = true;
    }

    @Override
    public boolean performCommit(long numberOfMessagesSinceLastCommit, Duration timeSinceLastCommit) {
        if (force) {
            force = false;
            return true;
        }
        return timeSinceLastCommit.compareTo(interval) >= 0;
    }
}
