package dev.outboxkit.spring;

import dev.outboxkit.console.Console;
import dev.outboxkit.console.ConsoleRequest;
import dev.outboxkit.console.ConsoleResponse;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Hands the servlet requests under the console's path to {@link Console#handle}. Who may write is the servlet
 * request's business ({@code isUserInRole}, which Spring Security answers from the user's authorities), so there is no
 * compile-time tie to Spring Security. Not API: registered by {@link OutboxkitConsoleConfiguration}.
 */
final class ConsoleServlet extends HttpServlet {

    /** Where Spring Security's CsrfFilter leaves the request's token (its CsrfToken type's name). */
    static final String CSRF_ATTRIBUTE = "org.springframework.security.web.csrf.CsrfToken";

    private final transient Function<String, Console> factory;
    private final String operatorRole;
    private transient volatile Console console;

    /** {@code factory} builds the console for the servlet context's path, known once the servlet starts. */
    ConsoleServlet(Function<String, Console> factory, String operatorRole) {
        this.factory = factory;
        this.operatorRole = operatorRole;
    }

    @Override
    public void init() throws ServletException {
        console = factory.apply(getServletContext().getContextPath());
    }

    @Override
    public void destroy() {
        Console c = console;
        if (c != null) {
            c.close();
        }
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        Principal user = req.getUserPrincipal();
        boolean operator = user != null && req.isUserInRole(operatorRole);
        boolean post = "POST".equalsIgnoreCase(req.getMethod());
        if (post && user != null && !operator) {
            // The console would ask for a login (401); this user is logged in and lacks the role.
            byte[] body = ("Forbidden: retry and discard need the role " + operatorRole + " (outboxkit.console.operator-role); "
                    + "this user does not have it.\n").getBytes(StandardCharsets.UTF_8);
            resp.setStatus(HttpServletResponse.SC_FORBIDDEN);
            resp.setContentType("text/plain; charset=utf-8");
            resp.setContentLength(body.length);
            resp.getOutputStream().write(body);
            return;
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String name : Collections.list(req.getHeaderNames())) {
            headers.put(name, Collections.list(req.getHeaders(name)));
        }
        Map<String, List<String>> form = Map.of();
        String type = req.getContentType();
        if (post && type != null && type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded")) {
            // The parameters, not the body: Spring Security's CSRF filter has read the body for its _csrf already.
            Map<String, List<String>> params = new LinkedHashMap<>();
            req.getParameterMap().forEach((k, v) -> params.put(k, new ArrayList<>(Arrays.asList(v))));
            form = params;
        }
        ConsoleRequest request = new ConsoleRequest(req.getMethod(), req.getRequestURI(),
                ConsoleRequest.parameters(req.getQueryString()), form, headers, req.isSecure(), null);
        if (operator) {
            request = request.withOperator(user.getName());
        }
        String[] csrf = springCsrf(req.getAttribute(CSRF_ATTRIBUTE));
        if (csrf != null) {
            request = request.withHostCsrf(csrf[0], csrf[1]);
        }
        ConsoleResponse response = console.handle(request);
        resp.setStatus(response.status());
        response.headers().forEach(resp::setHeader);
        byte[] body = response.body();
        if (body.length > 0 && !"HEAD".equalsIgnoreCase(req.getMethod())) {
            resp.setContentLength(body.length);
            resp.getOutputStream().write(body);
        }
    }

    /**
     * Spring Security's token for this request as {parameter name, value}, read through its public interface
     * reflectively (Spring Security is optional); null without one.
     */
    static String[] springCsrf(Object token) {
        if (token == null) {
            return null;
        }
        try {
            Class<?> api = Class.forName(CSRF_ATTRIBUTE, false, token.getClass().getClassLoader());
            if (!api.isInstance(token)) {
                return null;
            }
            Method name = api.getMethod("getParameterName");
            Method value = api.getMethod("getToken");
            return new String[] {(String) name.invoke(token), (String) value.invoke(token)};
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read Spring Security's CSRF token from the request attribute "
                    + CSRF_ATTRIBUTE + ": " + e, e);
        }
    }
}
