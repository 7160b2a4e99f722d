/**
 * Test support for Spring Boot services that use outboxkit: {@link dev.outboxkit.spring.test.AutoConfigureOutboxEvents}
 * on a {@code @SpringBootTest} records the outbox events the application writes in
 * {@link dev.outboxkit.spring.test.OutboxEvents}, which also waits until one reached Kafka or a consumer group's inbox.
 */
package dev.outboxkit.spring.test;
