/**
 * Real servers for tests: an embedded PostgreSQL 17 (or the machine's, an external one, Testcontainers) and a real
 * Kafka broker, a database per test ({@link dev.outboxkit.testkit.TestDatabase}) through the JUnit extension
 * {@link dev.outboxkit.testkit.OutboxTestkitExtension}, brokers and relays as child processes for kill and freeze
 * tests ({@link dev.outboxkit.testkit.KafkaProcess}, {@link dev.outboxkit.testkit.JavaProcess}), and the history
 * checker of the fault tests ({@link dev.outboxkit.testkit.History}).
 */
package dev.outboxkit.testkit;
