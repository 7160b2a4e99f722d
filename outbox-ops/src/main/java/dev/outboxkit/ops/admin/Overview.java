package dev.outboxkit.ops.admin;

import java.util.List;

/**
 * What an operator's overview shows, read at one moment ({@link OutboxAdmin#overview()}).
 *
 * @param status             the outbox's status, as {@link OutboxAdmin#status()} reads it
 * @param members            the polling relay instances, as {@link OutboxAdmin#relayMembers()} lists them
 * @param backlogByPartition the head of the backlog by polling relay partition, as {@link OutboxAdmin#backlogByPartition()}
 *                           splits it; empty when no polling relay instance is alive
 * @param reports            what every relay instance reports of itself, as {@link OutboxAdmin#relayReports()} lists them
 * @param reportsKept        the schema keeps reports ({@code outbox_relay_report}, version 13); false: {@code reports} is
 *                           empty because the schema is older
 */
public record Overview(Status status, List<RelayMember> members, List<PartitionBacklog> backlogByPartition,
                       List<RelayReport> reports, boolean reportsKept) {

    public Overview {
        members = List.copyOf(members);
        backlogByPartition = List.copyOf(backlogByPartition);
        reports = List.copyOf(reports);
    }
}
