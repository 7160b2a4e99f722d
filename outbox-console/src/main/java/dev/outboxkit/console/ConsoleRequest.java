package dev.outboxkit.console;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP request as the host server received it.
 *
 * @param method    the HTTP method ({@code GET}, {@code POST})
 * @param path      the request path, without query ({@code /console/dead-letters})
 * @param query     the query parameters, decoded
 * @param form      the {@code application/x-www-form-urlencoded} body's parameters, decoded; empty for a GET
 * @param headers   the request headers; names are matched without regard to case
 * @param secure    the connection is TLS (the session cookie is then {@code Secure})
 * @param operator  the operator the host framework authenticated; null when it authenticated none (the console's own
 *                  login then decides who may act)
 * @param hostCsrf  the host framework's own CSRF token, which every form of the page then carries as a hidden field
 *                  (besides the console's own); null when the host checks none
 */
public record ConsoleRequest(String method, String path, Map<String, List<String>> query, Map<String, List<String>> form,
                             Map<String, List<String>> headers, boolean secure, String operator, HostCsrf hostCsrf) {

    /**
     * A CSRF token the host framework checks on every POST before the console sees it (Spring Security's
     * {@code _csrf}, for example).
     *
     * @param parameterName the form field the host reads it from
     * @param token         its value for this request
     */
    public record HostCsrf(String parameterName, String token) {
        public HostCsrf {
            if (parameterName == null || parameterName.isBlank() || token == null) {
                throw new IllegalArgumentException("a host CSRF token needs a parameter name and a value");
            }
        }
    }

    /** A request without a host CSRF token. */
    public ConsoleRequest(String method, String path, Map<String, List<String>> query, Map<String, List<String>> form,
                          Map<String, List<String>> headers, boolean secure, String operator) {
        this(method, path, query, form, headers, secure, operator, null);
    }

    public ConsoleRequest {
        if (method == null || path == null) {
            throw new IllegalArgumentException("a console request needs a method and a path");
        }
        method = method.toUpperCase(Locale.ROOT);
        query = copy(query, false);
        form = copy(form, false);
        headers = copy(headers, true);
    }

    /** The first value of query parameter {@code name}, or null. */
    public String queryParameter(String name) {
        return first(query, name);
    }

    /** The first value of form parameter {@code name}, or null. */
    public String formParameter(String name) {
        return first(form, name);
    }

    /** The first value of header {@code name} (any case), or null. */
    public String header(String name) {
        return first(headers, name.toLowerCase(Locale.ROOT));
    }

    /** A request authenticated by the host framework as {@code operator}. */
    public ConsoleRequest withOperator(String operator) {
        return new ConsoleRequest(method, path, query, form, headers, secure, operator, hostCsrf);
    }

    /** This request with the host framework's CSRF token, for the forms of the page it answers with. */
    public ConsoleRequest withHostCsrf(String parameterName, String token) {
        return new ConsoleRequest(method, path, query, form, headers, secure, operator, new HostCsrf(parameterName, token));
    }

    /**
     * Decodes {@code a=1&b=x%20y} (a URL's query or an {@code application/x-www-form-urlencoded} body) into its
     * parameters, in order; null or empty gives none.
     */
    public static Map<String, List<String>> parameters(String urlEncoded) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (urlEncoded == null || urlEncoded.isEmpty()) {
            return out;
        }
        for (String pair : urlEncoded.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
        }
        return out;
    }

    private static String first(Map<String, List<String>> map, String name) {
        List<String> values = map.get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    private static Map<String, List<String>> copy(Map<String, List<String>> in, boolean lowerCaseKeys) {
        if (in == null) {
            return Map.of();
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        in.forEach((k, v) -> {
            if (k != null && v != null) {
                out.merge(lowerCaseKeys ? k.toLowerCase(Locale.ROOT) : k, List.copyOf(v), (a, b) -> {
                    List<String> both = new ArrayList<>(a);
                    both.addAll(b);
                    return List.copyOf(both);
                });
            }
        });
        return Map.copyOf(out);
    }
}
