package dev.outboxkit.consumer.internal;

import dev.outboxkit.core.InvalidEventException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

/**
 * Sorts a failure into one of three kinds. <em>Transient</em>: the database (or the connection to
 * it) had a problem that is not the event's fault — lost connection, deadlock, serialization
 * failure, shutdown, no resources; retried until it heals, never counted against the event.
 * <em>Poison</em>: the event can never succeed ({@link InvalidEventException}); dead-lettered at
 * once. Anything else is a handler failure: retried a bounded number of times, then dead-lettered.
 */
public final class Failures {

    /** SQLSTATE classes and codes that say "try again later", not "this event is bad". */
    private static final Set<String> TRANSIENT_CLASSES = Set.of("08", "40", "53", "58");
    private static final Set<String> TRANSIENT_CODES = Set.of("57P01", "57P02", "57P03", "55P03");

    private Failures() {
    }

    public static boolean isTransient(Throwable t) {
        for (Throwable cause = t; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLTransientException || cause instanceof SQLRecoverableException) {
                return true;
            }
            if (cause instanceof SQLException sql) {
                String state = sql.getSQLState();
                if (state != null && state.length() == 5
                        && (TRANSIENT_CLASSES.contains(state.substring(0, 2)) || TRANSIENT_CODES.contains(state))) {
                    return true;
                }
                if (state == null && sql.getCause() instanceof java.io.IOException) {
                    return true;
                }
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /** True when retrying cannot help: the event itself is bad. */
    public static boolean isPoison(Throwable t) {
        for (Throwable cause = t; cause != null; cause = cause.getCause()) {
            if (cause instanceof InvalidEventException) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /** True when the connection should be thrown away and a new one taken. */
    public static boolean isConnectionBroken(Throwable t) {
        for (Throwable cause = t; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLRecoverableException) {
                return true;
            }
            if (cause instanceof SQLException sql) {
                String state = sql.getSQLState();
                if (state != null && (state.startsWith("08") || state.startsWith("57P"))) {
                    return true;
                }
            }
            if (cause.getCause() == cause) {
                break;
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
