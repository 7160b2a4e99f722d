package dev.outboxkit.core.spi;

import java.net.URI;
import java.net.URISyntaxException;

/** Not API: checks and message helpers the contract's classes and the record mapping share. */
public final class Checks {

    private Checks() {
    }

    /** {@code value} as it can be shown in an error message: control characters escaped, at most 80 code points. */
    public static String printable(String value) {
        StringBuilder out = new StringBuilder();
        value.codePoints().limit(80).forEach(c -> {
            if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\u%04x", c));
            } else {
                out.appendCodePoint(c);
            }
        });
        return value.length() > 80 ? out + "…" : out.toString();
    }

    /** Null when {@code s} is a non-empty URI reference, else why not. */
    public static String uriProblem(String s) {
        if (s.isEmpty()) {
            return "it is empty";
        }
        try {
            new URI(s);
            return null;
        } catch (URISyntaxException e) {
            return e.getMessage();
        }
    }
}
