package dev.outboxkit.core.spi;

/** Not API: the size limit the writer and the relays agree on, so that an event the writer accepts can be sent. */
public final class RecordLimits {

    /** The largest request a relay's producer sends by default ({@code max.request.size}); the writer's default payload limit. */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1_048_576;

    private RecordLimits() {
    }
}
