package dev.outboxkit.relay.poller.spi;

import dev.outboxkit.relay.poller.internal.PollerSql;
import java.util.List;

/**
 * Not API: the slice indexes that let several claim loops of the polling relay claim side by side (the start-up log
 * quotes the same statements). The benchmarks create them to measure the claim loops.
 */
public final class SliceIndexes {

    /** The name the slice indexes start with. */
    public static final String NAME = PollerSql.SLICE_INDEX;

    private SliceIndexes() {
    }

    /** The statements that create the slice indexes in {@code schema}; run outside a transaction (CONCURRENTLY). */
    public static List<String> ddl(String schema) {
        return PollerSql.sliceIndexDdl(schema);
    }
}
