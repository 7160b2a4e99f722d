package dev.outboxkit.core;

import dev.outboxkit.core.spi.Checks;
import java.util.regex.Pattern;

/** Kafka's rules for topic names, checked before a record is sent. */
public final class Topics {

    public static final int MAX_LENGTH = 249;
    private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");

    private Topics() {
    }

    /** Null when {@code topic} is legal, else the reason it is not. */
    public static String problem(String topic) {
        if (topic == null || topic.isEmpty()) {
            return "a topic name must not be empty";
        }
        if (topic.equals(".") || topic.equals("..")) {
            return "'" + topic + "' is not a legal topic name";
        }
        if (topic.length() > MAX_LENGTH) {
            return "topic name is " + topic.length() + " characters long; Kafka allows at most " + MAX_LENGTH;
        }
        if (!LEGAL.matcher(topic).matches()) {
            return "topic name '" + Checks.printable(topic) + "' has characters Kafka does not allow "
                    + "(only ASCII letters, digits, '.', '_' and '-')";
        }
        return null;
    }

    public static boolean isLegal(String topic) {
        return problem(topic) == null;
    }

    /** Returns {@code topic} or throws {@link InvalidEventException} saying why it is illegal. */
    public static String requireLegal(String topic) {
        String problem = problem(topic);
        if (problem != null) {
            throw new InvalidEventException(problem);
        }
        return topic;
    }
}
