package dev.outboxkit.core.internal;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Not API: the span of publishing one event (see {@link Tracing#startPublish}). It ends once:
 * acknowledged (partition and offset recorded), refused for good (an error span saying the event
 * is parked, with the reason) or failed (an error span; the relay retries the event later).
 */
public abstract class PublishSpan {

    /** No span: tracing is off. */
    public static final PublishSpan NONE = new PublishSpan() {
        @Override
        public String header(String name) {
            return null;
        }

        @Override
        public void end(RecordMetadata metadata, Throwable error) {
        }

        @Override
        public Callback callback(Callback next) {
            return next;
        }
    };

    PublishSpan() {
    }

    /**
     * The value the record carries for the trace context header {@code name} ({@code traceparent},
     * {@code tracestate}) so that a consumer's span becomes a child of this one; null for none.
     */
    public abstract String header(String name);

    /** Ends the span: acknowledged when {@code error} is null, else failed or parked (per {@link PublishFailures}). */
    public abstract void end(RecordMetadata metadata, Throwable error);

    /** {@code next} (may be null), after ending this span with the send's outcome. */
    public Callback callback(Callback next) {
        return (metadata, exception) -> {
            end(metadata, exception);
            if (next != null) {
                next.onCompletion(metadata, exception);
            }
        };
    }
}
