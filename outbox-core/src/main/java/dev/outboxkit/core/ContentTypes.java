package dev.outboxkit.core;

import dev.outboxkit.core.spi.Checks;

/**
 * The content type of a binary payload (Kafka header {@code content-type}): a media type in the
 * shape RFC 6838 gives it, {@code type/subtype} with optional {@code ; name=value} parameters, for
 * example {@code application/x-protobuf; messageType=shop.OrderPlaced} or
 * {@code application/vnd.confluent.avro}. Checked by the writer before a row is written and by the
 * relays before a row is published (a producer may write the table with plain SQL).
 */
public final class ContentTypes {

    /** A restricted name (RFC 6838 section 4.2) is at most 127 characters. */
    private static final int MAX_NAME = 127;
    /** Longer than any sensible media type; keeps a header from turning into a payload. */
    private static final int MAX_LENGTH = 1024;

    private ContentTypes() {
    }

    /** Null when {@code contentType} is a well-formed media type, else what is wrong with it and how to fix it. */
    public static String problem(String contentType) {
        if (contentType == null || contentType.isBlank()) {
            return "a binary payload needs a content type such as application/x-protobuf or application/octet-stream";
        }
        if (contentType.length() > MAX_LENGTH) {
            return "content type is " + contentType.length() + " characters long; at most " + MAX_LENGTH + " are allowed";
        }
        String example = " (expected type/subtype[; name=value], for example application/x-protobuf)";
        int slash = contentType.indexOf('/');
        int semicolon = contentType.indexOf(';');
        int end = semicolon < 0 ? contentType.length() : semicolon;
        if (slash < 0 || slash > end) {
            return "content type '" + Checks.printable(contentType) + "' has no '/' between type and subtype" + example;
        }
        String nameProblem = nameProblem(contentType.substring(0, slash), "type");
        if (nameProblem == null) {
            nameProblem = nameProblem(contentType.substring(slash + 1, end).stripTrailing(), "subtype");
        }
        if (nameProblem != null) {
            return "content type '" + Checks.printable(contentType) + "': " + nameProblem + example;
        }
        while (semicolon >= 0) {
            int next = nextSeparator(contentType, semicolon + 1);
            String parameter = contentType.substring(semicolon + 1, next < 0 ? contentType.length() : next).strip();
            String parameterProblem = parameterProblem(parameter);
            if (parameterProblem != null) {
                return "content type '" + Checks.printable(contentType) + "': " + parameterProblem + example;
            }
            semicolon = next;
        }
        return null;
    }

    /** The next ';' that is not inside a quoted parameter value, or -1. */
    private static int nextSeparator(String s, int from) {
        boolean quoted = false;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (quoted && c == '\\') {
                i++;
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ';' && !quoted) {
                return i;
            }
        }
        return -1;
    }

    private static String nameProblem(String name, String what) {
        if (name.isEmpty()) {
            return "the " + what + " is empty";
        }
        if (name.length() > MAX_NAME) {
            return "the " + what + " is " + name.length() + " characters long; RFC 6838 allows at most " + MAX_NAME;
        }
        if (!isAsciiAlnum(name.charAt(0))) {
            return "the " + what + " must start with a letter or digit";
        }
        for (int i = 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!isAsciiAlnum(c) && "!#$&-^_.+".indexOf(c) < 0) {
                return "the " + what + " holds '" + Checks.printable(String.valueOf(c))
                        + "'; RFC 6838 allows letters, digits and !#$&-^_.+";
            }
        }
        return null;
    }

    private static String parameterProblem(String parameter) {
        int eq = parameter.indexOf('=');
        if (eq <= 0) {
            return "parameter '" + Checks.printable(parameter) + "' is not name=value";
        }
        String name = parameter.substring(0, eq);
        String value = parameter.substring(eq + 1);
        for (int i = 0; i < name.length(); i++) {
            if (!isTokenChar(name.charAt(i))) {
                return "parameter name '" + Checks.printable(name) + "' is not a token";
            }
        }
        if (value.length() >= 2 && value.charAt(0) == '"' && value.charAt(value.length() - 1) == '"') {
            for (int i = 1; i < value.length() - 1; i++) {
                char c = value.charAt(i);
                if (c < 0x20 && c != '\t' || c == 0x7f || c > 0xff) {
                    return "parameter '" + Checks.printable(name) + "' holds a control or non-Latin-1 character";
                }
            }
            return null;
        }
        if (value.isEmpty()) {
            return "parameter '" + Checks.printable(name) + "' has no value";
        }
        for (int i = 0; i < value.length(); i++) {
            if (!isTokenChar(value.charAt(i))) {
                return "parameter '" + Checks.printable(name) + "' has a value that is neither a token nor quoted";
            }
        }
        return null;
    }

    /** RFC 9110 tchar. */
    private static boolean isTokenChar(char c) {
        return isAsciiAlnum(c) || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }

    private static boolean isAsciiAlnum(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9';
    }
}
