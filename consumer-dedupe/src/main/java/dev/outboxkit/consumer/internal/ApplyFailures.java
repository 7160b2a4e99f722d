package dev.outboxkit.consumer.internal;

import dev.outboxkit.core.InvalidEventException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Not API: public for {@code DedupeConsumer} and {@code ExternalEffects}.
 *
 * <p>Sorts a failure into one of three kinds. <em>Transient</em>: the database (or the connection to
 * it) had a problem that is not the event's fault — lost connection, deadlock, serialization
 * failure, shutdown, no resources; retried until it heals, never counted against the event.
 * <em>Poison</em>: the event can never succeed ({@link InvalidEventException}); dead-lettered at
 * once. Anything else is a handler failure: retried a bounded number of times, then dead-lettered.
 */
public final class ApplyFailures {

    /** SQLSTATE classes and codes that say "try again later", not "this event is bad". */
    private static final Set<String> TRANSIENT_CLASSES = Set.of("08", "40", "53", "58");
    private static final Set<String> TRANSIENT_CODES = Set.of("57P01", "57P02", "57P03", "55P03");

    private ApplyFailures() {
    }

    public static boolean isTransient(Throwable t) {
        return anyCause(t, cause -> {
            if (cause instanceof SQLTransientException || cause instanceof SQLRecoverableException) {
                return true;
            }
            if (cause instanceof SQLException sql) {
                String state = sql.getSQLState();
                if (state == null) {
                    return sql.getCause() instanceof java.io.IOException;
                }
                return state.length() == 5
                        && (TRANSIENT_CLASSES.contains(state.substring(0, 2)) || TRANSIENT_CODES.contains(state));
            }
            return false;
        });
    }

    /** True when retrying cannot help: the event itself is bad. */
    public static boolean isPoison(Throwable t) {
        return anyCause(t, cause -> cause instanceof InvalidEventException);
    }

    /** True when the connection should be thrown away and a new one taken. */
    public static boolean isConnectionBroken(Throwable t) {
        return anyCause(t, cause -> cause instanceof SQLRecoverableException
                || cause instanceof SQLException sql && sql.getSQLState() != null
                && (sql.getSQLState().startsWith("08") || sql.getSQLState().startsWith("57P")));
    }

    private static boolean anyCause(Throwable t, Predicate<Throwable> test) {
        int depth = 0;
        for (Throwable cause = t; cause != null && depth < 32; cause = cause.getCause(), depth++) {
            if (test.test(cause)) {
                return true;
            }
        }
        return false;
    }

    /** One line: class and message, without the stack. */
    public static String describe(Throwable t) {
        String message = t.getMessage();
        return t.getClass().getName() + (message == null ? "" : ": " + message);
    }
}
