/**
 * Spring Boot integration: the writer in Spring transactions ({@link dev.outboxkit.spring.SpringOutboxWriter}),
 * domain events published with {@code ApplicationEventPublisher} as outbox events ({@link dev.outboxkit.spring.ToOutbox},
 * {@link dev.outboxkit.spring.OutboxEventMapper}),
 * idempotency keys for Spring MVC ({@link dev.outboxkit.spring.Idempotent}), the inbox for {@code @KafkaListener}s
 * ({@link dev.outboxkit.spring.SpringInbox}, {@link dev.outboxkit.spring.SpringDeadLetters}) and a relay inside the
 * application with its Actuator health; configured through {@code outboxkit.*} properties
 * ({@link dev.outboxkit.spring.OutboxkitProperties}).
 */
package dev.outboxkit.spring;
