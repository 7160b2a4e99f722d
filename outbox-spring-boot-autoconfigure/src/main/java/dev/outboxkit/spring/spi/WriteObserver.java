package dev.outboxkit.spring.spi;

import dev.outboxkit.writer.OutboxMessage;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/**
 * Told of each write of {@code SpringOutboxWriter}, on the transaction's connection, right after the
 * events were written: the seam outbox-spring-boot-test records events through. Beans of this type are
 * picked up by the auto-configured writer. Not API.
 */
public interface WriteObserver {

    /** {@code messages} were written as {@code ids} (same order) in the transaction of {@code connection}. */
    void written(Connection connection, List<OutboxMessage> messages, List<UUID> ids) throws SQLException;
}
