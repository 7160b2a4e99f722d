package dev.outboxkit.reliability;

import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;

/**
 * Where a scenario's database lives and how its relays reach it: the suite's own server behind a fault proxy
 * ({@link Environment}), or a primary with a streaming standby that fails over ({@code FailoverTest}).
 */
interface Ground {

    /** The server the scenario's database is created on (writers and the consumer use its {@code jdbcUrl}). */
    TestPostgres postgres();

    /** The URL the relays are given for {@code db}. */
    String relayJdbcUrl(TestDatabase db);

    /** Every fault of this ground off, the database answering: the state each scenario starts and drains from. */
    void heal();
}
