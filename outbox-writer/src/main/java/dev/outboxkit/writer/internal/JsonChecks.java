package dev.outboxkit.writer.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * Not API: public for {@code OutboxWriter} and {@code OutboxMessage} in {@code dev.outboxkit.writer}.
 *
 * <p>Checks JSON text before it is sent to a jsonb column, so PostgreSQL never has to refuse it.
 */
public final class JsonChecks {

    private static final JsonFactory FACTORY = new JsonFactory();

    private JsonChecks() {
    }

    /**
     * Null when {@code json} is exactly one JSON value that PostgreSQL's jsonb accepts, else what
     * is wrong with it. Besides syntax, jsonb refuses strings holding U+0000 and unpaired UTF-16
     * surrogates; both are checked here. The text is never echoed back (it may be sensitive).
     */
    public static String problem(String json) {
        if (json == null || json.isBlank()) {
            return "is empty; a payload must be one JSON value, for example {} or {\"amount\": 10}";
        }
        try (JsonParser p = FACTORY.createParser(json)) {
            JsonToken token = p.nextToken();
            if (token == null) {
                return "is empty; a payload must be one JSON value, for example {} or {\"amount\": 10}";
            }
            int depth = 0;
            do {
                switch (token) {
                    case START_OBJECT, START_ARRAY -> depth++;
                    case END_OBJECT, END_ARRAY -> depth--;
                    case FIELD_NAME, VALUE_STRING -> {
                        String problem = stringProblem(p.getText());
                        if (problem != null) {
                            return problem + " at " + where(p.currentLocation());
                        }
                    }
                    default -> {
                        // numbers, booleans, null: nothing to check
                    }
                }
                if (depth == 0) {
                    break;
                }
                token = p.nextToken();
            } while (token != null);
            if (depth != 0) {
                return "is not valid JSON: it ends before the value is complete";
            }
            JsonToken after = p.nextToken();
            if (after != null) {
                return "is not valid JSON: there is more after the first JSON value, at " + where(p.currentTokenLocation());
            }
            return null;
        } catch (JsonProcessingException e) {
            return "is not valid JSON: " + e.getOriginalMessage() + " at " + where(e.getLocation());
        } catch (IOException e) {
            return "could not be read: " + e.getMessage();
        }
    }

    private static String stringProblem(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == 0) {
                return "holds the character U+0000, which PostgreSQL's jsonb cannot store (remove it or encode the data, e.g. Base64)";
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return "holds an unpaired UTF-16 surrogate, which is not valid Unicode";
            }
            if (Character.isLowSurrogate(c)) {
                return "holds an unpaired UTF-16 surrogate, which is not valid Unicode";
            }
        }
        return null;
    }

    /** Null when {@code s} can be stored in a PostgreSQL text column, else why not. */
    public static String textProblem(String s) {
        return stringProblem(s);
    }

    private static String where(JsonLocation location) {
        return location == null ? "an unknown position" : "line " + location.getLineNr() + ", column " + location.getColumnNr();
    }

    /** The number of bytes {@code s} takes in UTF-8, without encoding it. */
    public static long utf8Length(String s) {
        long n = 0;
        int length = s.length();
        for (int i = 0; i < length; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }
}
