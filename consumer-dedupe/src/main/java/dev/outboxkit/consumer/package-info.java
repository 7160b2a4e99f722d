/**
 * The idempotent consumer: each event applied once, by event id, in the consumer's own transaction.
 * 
 * <p>{@link dev.outboxkit.consumer.DedupeConsumer} runs a Kafka consumer group with an
 * {@link dev.outboxkit.consumer.EventHandler} (or {@link dev.outboxkit.consumer.BatchHandler}) and dead letters;
 * {@link dev.outboxkit.consumer.Inbox} is the same rule for a listener of your own; {@link dev.outboxkit.consumer.InboxRetention}
 * purges recorded ids only past what the group committed; {@link dev.outboxkit.consumer.FencedWrites} and
 * {@link dev.outboxkit.consumer.ExternalEffects} cover effects outside the consumer's database. Packages named
 * {@code internal} are not API.
 */
package dev.outboxkit.consumer;
