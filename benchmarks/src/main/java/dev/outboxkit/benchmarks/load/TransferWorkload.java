package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The writer workload: money transfers between {@value SyntheticEvents#ACCOUNTS} accounts, one
 * transaction each: debit one account, credit another (lower id first, so transfers do not
 * deadlock), commit. {@link #run} with {@link Hook#NONE} is the baseline without an outbox; the
 * writer scenarios pass a hook that writes the event(s) in the same transaction and measure the two
 * {@link #backToBack}.
 */
public final class TransferWorkload {

    /** The accounts table this workload creates in the benchmark database. */
    public static final String ACCOUNT_TABLE = "bench_account";

    private TransferWorkload() {
    }

    /** One transfer: from, to, amount. */
    public record Transfer(int from, int to, long amount) {
    }

    /** Extra work inside each transfer's transaction (for example: write the outbox event). */
    @FunctionalInterface
    public interface Hook {
        Hook NONE = (connection, transfer) -> { };

        void afterTransfer(Connection connection, Transfer transfer) throws SQLException;
    }

    /** Creates and fills {@value #ACCOUNT_TABLE} in {@code public} (idempotent). */
    public static void createAccounts(TestDatabase db) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + ACCOUNT_TABLE + " (id int PRIMARY KEY, balance bigint NOT NULL)");
            s.execute("INSERT INTO " + ACCOUNT_TABLE + " SELECT g, 1000000 FROM generate_series(0, "
                    + (SyntheticEvents.ACCOUNTS - 1) + ") g ON CONFLICT DO NOTHING");
            s.execute("VACUUM (ANALYZE) " + ACCOUNT_TABLE);
        }
    }

    /** Transfers/s of {@code clients} clients over the timed window, {@code hook} inside each transfer. */
    public static ClosedLoop.Result run(TestDatabase db, int clients, Duration warmup, Duration window, Hook hook)
            throws Exception {
        return ClosedLoop.run(db, clients, warmup, window, connection -> {
            PreparedStatement update = connection.prepareStatement(
                    "UPDATE " + ACCOUNT_TABLE + " SET balance = balance + ? WHERE id = ?");
            return () -> {
                Transfer t = randomTransfer();
                int a = t.from();
                int b = t.to();
                apply(update, Math.min(a, b), a < b ? -t.amount() : t.amount());
                apply(update, Math.max(a, b), a < b ? t.amount() : -t.amount());
                hook.afterTransfer(connection, t);
            };
        });
    }

    /**
     * Transfers/s without and with {@code hook}, {@link BackToBack} on {@code db}: each of the four legs runs
     * {@code clients} clients for {@code warmup} and then half of {@code window}.
     */
    public static BackToBack backToBack(TestDatabase db, int clients, Duration warmup, Duration window, Hook hook)
            throws Exception {
        Duration half = window.dividedBy(2);
        return BackToBack.measure(() -> run(db, clients, warmup, half, Hook.NONE).perSecond(),
                () -> run(db, clients, warmup, half, hook).perSecond());
    }

    /** A transfer between two different random accounts, 1 to 100. */
    public static Transfer randomTransfer() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int a = random.nextInt(SyntheticEvents.ACCOUNTS);
        int b = random.nextInt(SyntheticEvents.ACCOUNTS - 1);
        b = b >= a ? b + 1 : b;
        return new Transfer(a, b, 1 + random.nextInt(100));
    }

    private static void apply(PreparedStatement update, int account, long delta) throws SQLException {
        update.setLong(1, delta);
        update.setInt(2, account);
        if (update.executeUpdate() != 1) {
            throw new IllegalStateException("account " + account + " is missing from " + ACCOUNT_TABLE);
        }
    }
}
