/**
 * The contract every part of outboxkit shares about the data: the event model, event ids, header names and record
 * formats, topic routes, and the rules for identifiers, topics and tables. It holds no Kafka client and no connection
 * pool, so the writer a service embeds brings neither. Package {@code spi} holds what outboxkit's own modules share
 * beyond that; it is not API.
 */
package dev.outboxkit.core;
