package dev.outboxkit.spring.console;

import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** One user's HTTP client (HTTP basic, its own cookies, so Spring's session and CSRF token last across requests). */
final class ConsoleClient {

    private static final Pattern FORM = Pattern.compile("<form method=\"post\" action=\"([^\"]+)\"[^>]*>(.*?)</form>", Pattern.DOTALL);
    private static final Pattern FIELD = Pattern.compile("<input type=\"hidden\" name=\"([^\"]+)\" value=\"([^\"]*)\">");

    private final HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager())
            .connectTimeout(Duration.ofSeconds(10)).build();
    private final String authorization;

    ConsoleClient(String user) {
        this.authorization = "Basic " + Base64.getEncoder().encodeToString((user + ":" + user + "-pw").getBytes(StandardCharsets.UTF_8));
    }

    HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", authorization).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    HttpResponse<String> postForm(int port, String path, Map<String, String> fields) throws Exception {
        String body = fields.entrySet().stream()
                .map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30))
                        .header("Authorization", authorization).header("Content-Type", "application/x-www-form-urlencoded")
                        .header("Origin", "http://127.0.0.1:" + port)
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    /** The hidden fields of the page's POST form to {@code action} that carries {@code marker}; null when there is none. */
    static Map<String, String> form(String html, String action, String marker) {
        Matcher m = FORM.matcher(html);
        while (m.find()) {
            if (m.group(1).equals(action) && m.group(2).contains(marker)) {
                Map<String, String> fields = new LinkedHashMap<>();
                Matcher f = FIELD.matcher(m.group(2));
                while (f.find()) {
                    fields.put(f.group(1), f.group(2).replace("&amp;", "&"));
                }
                return fields;
            }
        }
        return null;
    }
}
