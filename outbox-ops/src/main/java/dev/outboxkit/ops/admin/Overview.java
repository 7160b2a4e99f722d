package dev.outboxkit.ops.admin;

import java.util.List;

/**
 * What an operator's overview shows, read at one moment ({@link OutboxAdmin#overview()}).
 *
 * @param status             the outbox's status, as {@link OutboxAdmin#status()} reads it
 * @param members            the polling relay instances, as {@link OutboxAdmin#relayMembers()} lists them
 * @param backlogByPartition the head of the backlog by polling relay partition, as {@link OutboxAdmin#backlogByPartition()}
 *                           splits it; empty when no polling relay instance is alive
 */
public record Overview(Status status, List<RelayMember> members, List<PartitionBacklog> backlogByPartition) {

    public Overview {
        members = List.copyOf(members);
        backlogByPartition = List.copyOf(backlogByPartition);
    }
}
