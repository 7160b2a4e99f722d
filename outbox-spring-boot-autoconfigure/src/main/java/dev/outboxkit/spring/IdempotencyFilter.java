package dev.outboxkit.spring;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxkit.writer.CommitOutcomeUnknownException;
import dev.outboxkit.writer.IdempotencyException;
import dev.outboxkit.writer.IdempotencyKeyExpiredException;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.KeyReusedWithDifferentRequestException;
import dev.outboxkit.writer.RequestInProgressException;
import dev.outboxkit.writer.StoredResponse;
import dev.outboxkit.writer.TerminalFailureException;
import dev.outboxkit.writer.spi.IdempotencyEngine;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Principal;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.ContentCachingResponseWrapper;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Serves {@link Idempotent} endpoints: claim the key, run the handler in a transaction with the
 * response buffered, store the outcome in that transaction, commit, send. See {@link Idempotent}
 * for the contract. Not API: registered by the auto-configuration.
 */
final class IdempotencyFilter extends OncePerRequestFilter {

    static final String KEY_HEADER = "Idempotency-Key";
    static final String REPLAYED_HEADER = "Idempotent-Replayed";

    private static final Logger log = LoggerFactory.getLogger(IdempotencyFilter.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Set by the container or meaningless on a replay; never stored. */
    private static final Set<String> UNSTORED_HEADERS = Set.of("content-length", "date", "transfer-encoding", "connection",
            "keep-alive", "set-cookie", REPLAYED_HEADER.toLowerCase(Locale.ROOT));

    private final IdempotencyEngine engine;
    private final DataSource dataSource;
    private final PlatformTransactionManager transactionManager;
    private final Supplier<RequestMappingHandlerMapping> handlerMapping;
    private final OutboxkitProperties.Idempotency settings;

    IdempotencyFilter(IdempotencyKeys keys, DataSource dataSource, PlatformTransactionManager transactionManager,
                      Supplier<RequestMappingHandlerMapping> handlerMapping, OutboxkitProperties.Idempotency settings) {
        this.engine = keys.unwrap(IdempotencyEngine.class);
        this.dataSource = dataSource;
        this.transactionManager = transactionManager;
        this.handlerMapping = handlerMapping;
        this.settings = settings;
    }

    /** The endpoint's annotation and scope, or null when the request is not for an @Idempotent handler. */
    private record Endpoint(Idempotent annotation, String scope) {
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        Endpoint endpoint = endpoint(request);
        if (endpoint == null) {
            chain.doFilter(request, response);
            return;
        }
        String key = request.getHeader(KEY_HEADER);
        if (key == null) {
            if (endpoint.annotation().required()) {
                problem(response, 400, "Idempotency-Key required", "this endpoint requires an " + KEY_HEADER
                        + " header: send a new unique value (for example a UUID) with each new request, and the same "
                        + "value when you retry it", null);
            } else {
                chain.doFilter(request, response);
            }
            return;
        }
        byte[] body = request.getInputStream().readNBytes(settings.getMaxRequestBytes() + 1);
        if (body.length > settings.getMaxRequestBytes()) {
            problem(response, 413, "Request too large", "an idempotent request is buffered to be hashed; its body may "
                    + "have at most " + settings.getMaxRequestBytes() + " bytes (outboxkit.idempotency.max-request-bytes)", null);
            return;
        }
        String scope = scope(endpoint.scope(), request.getUserPrincipal());
        IdempotencyEngine.Claim claim;
        try {
            claim = engine.claim(dataSource, scope, key, IdempotencyEngine.requestHash(canonicalRequest(request, body)));
        } catch (IdempotencyException e) {
            problem(response, e.httpStatus(), title(e), e.getMessage(),
                    e instanceof RequestInProgressException inProgress ? inProgress.retryAfter() : null);
            return;
        } catch (IllegalArgumentException e) {
            problem(response, 400, "Invalid Idempotency-Key", e.getMessage(), null);
            return;
        } catch (SQLException e) {
            throw new ServletException("could not claim idempotency key '" + key + "' in scope '" + scope + "': "
                    + e.getMessage(), e);
        }
        if (!claim.held()) {
            send(response, claim.replay(), true);
            return;
        }
        run(new BufferedRequest(request, body), response, chain, claim);
    }

    /** The filter's adapter over the engine: the handler runs in a Spring transaction with its response buffered. */
    private void run(HttpServletRequest request, HttpServletResponse response, FilterChain chain, IdempotencyEngine.Claim claim)
            throws ServletException, IOException {
        ContentCachingResponseWrapper buffered = new ContentCachingResponseWrapper(response);
        SpringWorkTransaction tx = new SpringWorkTransaction(transactionManager, dataSource);
        IdempotencyEngine.Outcome outcome;
        try {
            outcome = engine.run(claim, tx, () -> {
                try {
                    chain.doFilter(request, buffered);
                } catch (RuntimeException | Error | IOException | ServletException e) {
                    TerminalFailureException terminal = terminal(e);
                    if (terminal != null) {
                        throw terminal;
                    }
                    throw e;
                }
                StoredResponse captured = capture(buffered);
                if (!stored(captured.status())) {
                    return Optional.empty(); // not final: rolled back, the key released, the response sent as it is
                }
                if (tx.isRollbackOnly()) {
                    // The handler's own @Transactional failed and an exception handler answered with a final status:
                    // like TerminalFailureException, the work is rolled back and the answer stored.
                    throw new TerminalFailureException(captured);
                }
                return Optional.of(captured);
            });
        } catch (CommitOutcomeUnknownException e) {
            buffered.resetBuffer();
            response.reset();
            log.warn("the connection failed while committing idempotency key '{}' in scope '{}': the outcome is unknown, "
                    + "answered 503; a retry with the same key gets the stored response if it committed, or runs the "
                    + "work again after the lease ({}) if not", claim.key(), claim.scope(), engine.lease(), e);
            problem(response, 503, "Commit outcome unknown", "the database connection failed while this request was "
                    + "committing, so it may or may not have taken effect. Retry with the same " + KEY_HEADER
                    + ": you get the stored response if it did, or it runs again if it did not", engine.lease());
            return;
        } catch (IOException | ServletException | RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new ServletException("could not store the outcome of idempotency key '" + claim.key() + "' in scope '"
                    + claim.scope() + "'; the work was rolled back and the key released: " + e.getMessage(), e);
        }
        switch (outcome.ending()) {
            case EXECUTED, RELEASED -> buffered.copyBodyToResponse();
            case TERMINAL -> {
                buffered.resetBuffer();
                response.reset();
                send(response, outcome.response(), false);
            }
            case CLAIM_LOST -> {
                buffered.resetBuffer();
                response.reset();
                problem(response, 409, "Request in progress", claimLost(claim), Duration.ofSeconds(1));
            }
        }
    }

    private static String claimLost(IdempotencyEngine.Claim claim) {
        return "this request took longer than the lease of idempotency key '" + claim.key() + "' and a retry took the key "
                + "over; this attempt was rolled back. Retry with the same key to get the other attempt's response";
    }

    private static String title(IdempotencyException e) {
        if (e instanceof KeyReusedWithDifferentRequestException) {
            return "Idempotency-Key reused";
        }
        return e instanceof IdempotencyKeyExpiredException ? "Idempotency-Key expired" : "Request in progress";
    }

    private boolean stored(int status) {
        return status < 500 && !settings.getRetriableStatuses().contains(status);
    }

    private static TerminalFailureException terminal(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof TerminalFailureException terminal) {
                return terminal;
            }
        }
        return null;
    }

    private static StoredResponse capture(ContentCachingResponseWrapper response) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (response.getContentType() != null) {
            headers.put("Content-Type", response.getContentType());
        }
        for (String name : response.getHeaderNames()) {
            String lower = name.toLowerCase(Locale.ROOT);
            if (!UNSTORED_HEADERS.contains(lower) && !lower.equals("content-type")) {
                headers.put(name, String.join(", ", response.getHeaders(name)));
            }
        }
        return new StoredResponse(response.getStatus(), headers, response.getContentAsByteArray());
    }

    private static void send(HttpServletResponse response, StoredResponse stored, boolean replayed) throws IOException {
        response.setStatus(stored.status());
        stored.headers().forEach(response::setHeader);
        if (replayed) {
            response.setHeader(REPLAYED_HEADER, "true");
        }
        byte[] body = stored.body();
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        response.flushBuffer();
    }

    private static void problem(HttpServletResponse response, int status, String title, String detail, Duration retryAfter)
            throws IOException {
        ObjectNode problem = JSON.createObjectNode().put("type", "about:blank").put("title", title).put("status", status)
                .put("detail", detail);
        response.setStatus(status);
        if (retryAfter != null) {
            response.setHeader("Retry-After", Long.toString(Math.max(1, retryAfter.toSeconds())));
        }
        response.setContentType("application/problem+json");
        byte[] body = JSON.writeValueAsBytes(problem);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        response.flushBuffer();
    }

    /**
     * The scope of a key: the endpoint, and the authenticated caller when there is one. A long
     * caller name is replaced by its SHA-256 so the scope stays within the 255 characters allowed.
     */
    static String scope(String endpoint, Principal caller) {
        if (caller == null || caller.getName() == null) {
            return limit(endpoint);
        }
        String name = caller.getName();
        String scope = endpoint + " caller=" + name;
        if (scope.length() <= IdempotencyKeys.MAX_SCOPE_LENGTH && name.chars().noneMatch(ch -> ch < 0x20 || ch == 0x7f)) {
            return scope;
        }
        return limit(endpoint + " caller-sha256=" + sha256(name.getBytes(StandardCharsets.UTF_8)));
    }

    private static String limit(String scope) {
        return scope.length() <= IdempotencyKeys.MAX_SCOPE_LENGTH ? scope : "sha256=" + sha256(scope.getBytes(StandardCharsets.UTF_8));
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * What the request hash covers: method, path, query and the body; a JSON body in canonical
     * form (member order and whitespace do not matter), any other body as its SHA-256.
     */
    static JsonNode canonicalRequest(HttpServletRequest request, byte[] body) {
        ObjectNode node = JSON.createObjectNode().put("method", request.getMethod()).put("path", request.getRequestURI());
        if (request.getQueryString() != null) {
            node.put("query", request.getQueryString());
        }
        String type = request.getContentType();
        if (body.length > 0 && type != null && type.toLowerCase(Locale.ROOT).contains("json")) {
            try {
                node.set("body", JSON.readTree(body));
                return node;
            } catch (IOException notJson) {
                // hashed as bytes below; the handler will refuse it
            }
        }
        node.put("bodySha256", sha256(body));
        return node;
    }

    private Endpoint endpoint(HttpServletRequest request) throws ServletException {
        RequestMappingHandlerMapping mapping = handlerMapping.get();
        if (mapping == null) {
            return null;
        }
        Object parsedPath = request.getAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
        try {
            ServletRequestPathUtils.parseAndCache(request);
            HandlerExecutionChain handler = mapping.getHandler(request);
            if (handler == null || !(handler.getHandler() instanceof HandlerMethod method)) {
                return null;
            }
            Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(method.getMethod(), Idempotent.class);
            if (annotation == null) {
                annotation = AnnotatedElementUtils.findMergedAnnotation(method.getBeanType(), Idempotent.class);
            }
            if (annotation == null) {
                return null;
            }
            Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
            String scope = !annotation.scope().isBlank() ? annotation.scope()
                    : request.getMethod() + " " + (pattern != null ? pattern : request.getRequestURI());
            return new Endpoint(annotation, scope);
        } catch (Exception e) {
            throw new ServletException("could not find the handler of " + request.getMethod() + " " + request.getRequestURI()
                    + " to check it for @Idempotent: " + e.getMessage(), e);
        } finally {
            if (parsedPath == null) {
                request.removeAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
            } else {
                request.setAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE, parsedPath);
            }
        }
    }
}
