package dev.outboxkit.ops.admin;

import java.time.Instant;

/**
 * One group of dead letters parked for the same reason ({@link OutboxAdmin#deadLetterReasons}): the same error class
 * and the same message once its variable parts are replaced (the rule: {@link OutboxAdmin#deadLetterReasons}). Act on exactly
 * this group with {@link DeadLetterFilter#withReason(String, String)}.
 *
 * @param errorClass     the exception's class, as the relay recorded it
 * @param messagePattern the message with every UUID, quoted value and number replaced by {@code {}}
 * @param count          dead letters in the group
 * @param firstParked    when the first of them was parked
 * @param lastParked     when the last of them was parked
 */
public record DeadLetterReason(String errorClass, String messagePattern, long count, Instant firstParked,
                              Instant lastParked) {
}
