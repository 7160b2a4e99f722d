package dev.outboxkit.relay.cdc.internal;

import java.time.Duration;

/**
 * Debezium's pace ({@link EngineConfig}): how often offsets are flushed and heartbeats written, how many events a
 * batch holds and how long a lone event waits in Debezium's queue.
 */
record EngineTuning(Duration offsetFlushInterval, Duration heartbeatInterval, int maxBatchSize, Duration pollInterval) {
}
