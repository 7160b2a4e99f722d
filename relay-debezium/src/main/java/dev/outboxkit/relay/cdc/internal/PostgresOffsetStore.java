package dev.outboxkit.relay.cdc.internal;

import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.OffsetBackingStore;
import org.apache.kafka.connect.util.Callback;

/**
 * Not API: public because Kafka Connect creates it by class name ({@code offset.storage}).
 *
 * <p>Kafka Connect offset storage in PostgreSQL ({@code outbox_cdc_offset}), next to the data it
 * describes. Debezium's engine instantiates it by class name; the relay hands it its context through
 * {@link #register} and the engine property {@value #CONTEXT_PROPERTY}.
 *
 * <p>Every write checks the fencing token of the relay lease in the same transaction, so a stale
 * instance can move the offset neither back nor forward. Every read (the engine reads when its task
 * starts, also when Debezium restarts the task after a connection loss) first runs the slot check:
 * a slot that vanished meanwhile stops the relay instead of being silently recreated at the WAL's end.
 */
public final class PostgresOffsetStore implements OffsetBackingStore {

    /** Engine property naming the registered context. */
    public static final String CONTEXT_PROPERTY = "outboxkit.offset.store.context";

    /** What the store needs from the relay. */
    record Context(StateTables tables, LongSupplier fence, Runnable beforeRead, Consumer<Throwable> onWriteFailure) {
    }

    private static final Map<String, Context> CONTEXTS = new ConcurrentHashMap<>();

    private Context context;
    private ExecutorService executor;

    static String register(Context context) {
        String id = UUID.randomUUID().toString();
        CONTEXTS.put(id, context);
        return id;
    }

    static void unregister(String id) {
        CONTEXTS.remove(id);
    }

    @Override
    public void configure(WorkerConfig config) {
        Object id = config.originals().get(CONTEXT_PROPERTY);
        context = id == null ? null : CONTEXTS.get(id.toString());
        if (context == null) {
            throw new IllegalStateException(PostgresOffsetStore.class.getName() + " is used by outboxkit's CdcRelay only; "
                    + "it cannot be configured by name alone (missing " + CONTEXT_PROPERTY + ")");
        }
    }

    @Override
    public void start() {
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "outboxkit-cdc-offsets");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void stop() {
        if (executor != null) {
            executor.shutdown();
            try {
                executor.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            executor = null;
        }
    }

    /**
     * The read runs on the store's thread; the future it returns does not give up on an interrupt. Debezium's
     * Postgres task reads the offsets on its polling thread to confirm the flushed position to the slot
     * ({@code performCommit}), and a stop cancels that thread with an interrupt: Kafka Connect's reader
     * logs the interrupted wait as an ERROR with a stack trace, on a stop that loses nothing. An
     * interrupt cannot abort the query anyway, so the wait ends with the read (one short query) and the
     * interrupt stays set for the caller's next blocking step.
     */
    @Override
    public Future<Map<ByteBuffer, ByteBuffer>> get(Collection<ByteBuffer> keys) {
        return new InterruptTolerant<>(executor.submit(() -> {
            context.beforeRead().run();
            return context.tables().read(keys);
        }));
    }

    /** A future whose waits finish despite interrupts, then restore the caller's interrupt flag. */
    private record InterruptTolerant<T>(Future<T> delegate) implements Future<T> {

        @Override
        public T get() throws ExecutionException {
            try {
                return waitOut(delegate::get);
            } catch (TimeoutException e) {
                throw new IllegalStateException("a wait without a timeout timed out", e);
            }
        }

        @Override
        public T get(long timeout, TimeUnit unit) throws ExecutionException, TimeoutException {
            long deadline = System.nanoTime() + unit.toNanos(timeout);
            return waitOut(() -> delegate.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS));
        }

        private interface Wait<T> {
            T get() throws InterruptedException, ExecutionException, TimeoutException;
        }

        private static <T> T waitOut(Wait<T> wait) throws ExecutionException, TimeoutException {
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        return wait.get();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return delegate.cancel(mayInterruptIfRunning);
        }

        @Override
        public boolean isCancelled() {
            return delegate.isCancelled();
        }

        @Override
        public boolean isDone() {
            return delegate.isDone();
        }
    }

    @Override
    public Future<Void> set(Map<ByteBuffer, ByteBuffer> values, Callback<Void> callback) {
        return executor.submit(() -> {
            try {
                context.tables().write(values, context.fence());
            } catch (Exception e) {
                context.onWriteFailure().accept(e);
                if (callback != null) {
                    callback.onCompletion(e, null);
                }
                throw e;
            }
            if (callback != null) {
                callback.onCompletion(null, null);
            }
            return null;
        });
    }

    @Override
    public Set<Map<String, Object>> connectorPartitions(String connectorName) {
        return Set.of();
    }
}
