package dev.outboxkit.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a Spring MVC handler method (or every method of a controller) as idempotent under the
 * client's {@code Idempotency-Key} header, with the contract of
 * {@link dev.outboxkit.writer.IdempotencyKeys}:
 * <ul>
 *   <li>The first request with a key runs; the handler's database work, its outbox events
 *       ({@link SpringOutboxWriter}) and the key's stored outcome commit in one transaction,
 *       which the filter opens around the handler (a {@code @Transactional} handler joins it).</li>
 *   <li>A retry with the same key and request gets the stored status, headers and body again,
 *       byte for byte, plus {@code Idempotent-Replayed: true}; the handler does not run.</li>
 *   <li>Same key, another request (method, path, query or canonical JSON body): 422. Still in
 *       progress: 409 with {@code Retry-After}. Purged key remembered by its tombstone: 410.
 *       Connection lost during the commit (outcome unknown): 503 with {@code Retry-After}.</li>
 *   <li>Only final outcomes are stored: every status below 500 except
 *       {@code outboxkit.idempotency.retriable-statuses} (401, 403, 408, 409, 425, 429 by default).
 *       A 5xx, a retriable status or an exception rolls the work back and releases the key, so a
 *       retry runs at once. A {@link dev.outboxkit.writer.TerminalFailureException} thrown by the
 *       handler rolls the work back and stores its response.</li>
 *   <li>Keys are scoped per endpoint and per authenticated caller
 *       ({@code HttpServletRequest.getUserPrincipal()}, which Spring Security fills): one caller
 *       can never replay another caller's response.</li>
 * </ul>
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

    /** The key's scope; default the endpoint: the HTTP method and the mapping's path pattern, e.g. {@code POST /transfers}. */
    String scope() default "";

    /** Whether a request without the header is refused with 400 (default) or runs without idempotency. */
    boolean required() default true;
}
