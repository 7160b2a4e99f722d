package dev.outboxkit.runtime;

import java.util.Map;
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
        public Map<String, String> context() {
            return Map.of();
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
     * This span's W3C context ({@code traceparent}, {@code tracestate} when there is one): what the
     * record carries, so that a consumer's span becomes a child of this one.
     */
    public abstract Map<String, String> context();

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
