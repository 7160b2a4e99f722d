package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.OutboxTables;

/**
 * What the relay's parts agree on about the slot they serve: its name and publication, the outboxkit tables, the lease
 * every instance competes for ({@code cdc/<slot>}), whether the table is the truth ({@code deleteAfterPublish}) and
 * whether the slot is made a failover slot. Read once from the settings where the relay is wired.
 */
record SlotTerms(String slotName, String publicationName, OutboxTables tables, String leaseKey, boolean deleteAfterPublish,
                 boolean failoverSlot) {

    String schema() {
        return tables.schema();
    }

    String outboxTable() {
        return tables.outboxEvent();
    }

    /** {@code "schema"."name"} for one of the {@link OutboxTables} names. */
    String table(String name) {
        return tables.qualified(name);
    }
}
