package dev.outboxkit.writer;

/**
 * Turns a payload given as an object ({@link OutboxMessage.Builder#payload(Object)}) into JSON text, for
 * {@link OutboxWriter.Builder#payloadSerializer(PayloadSerializer)}: an application's own JSON mapper, with its
 * modules and settings, for example Jackson 3's {@code jsonMapper::writeValueAsString}.
 */
@FunctionalInterface
public interface PayloadSerializer {

    /**
     * @return the payload as one JSON value
     * @throws Exception when the payload cannot be serialised; the writer refuses the event with an
     *                   {@link dev.outboxkit.core.InvalidEventException} that carries it
     */
    String toJson(Object payload) throws Exception;
}
