package dev.outboxkit.runtime;

/**
 * Not API: the span of processing one consumed record (see {@link Tracing#startProcess}). Made
 * current while the handler runs, so the handler's own spans (JDBC, HTTP) nest under it.
 */
public abstract class ProcessSpan {

    /** Restores what was current before {@link #makeCurrent}. */
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    private static final Scope NO_SCOPE = () -> { };

    /** No span: tracing is off. */
    public static final ProcessSpan NONE = new ProcessSpan() {
        @Override
        public Scope makeCurrent() {
            return NO_SCOPE;
        }

        @Override
        public void duplicate() {
        }

        @Override
        public void failed(Throwable error) {
        }

        @Override
        public void deadLettered(String topic, String reason) {
        }

        @Override
        public void end() {
        }
    };

    ProcessSpan() {
    }

    public abstract Scope makeCurrent();

    /** The inbox already holds the event's id: the handler is not run for it. */
    public abstract void duplicate();

    /** The handler (or the transaction around it) failed. */
    public abstract void failed(Throwable error);

    /** The record goes to the dead-letter (or review) {@code topic}, for {@code reason}. */
    public abstract void deadLettered(String topic, String reason);

    public abstract void end();
}
