package dev.outboxkit.writer;

import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Child JVM for {@link IdempotencyKeysTest}: claims a key, makes its effect, announces WORKING
 * and hangs until it is killed with SIGKILL, like a service that crashed mid-request.
 * Arguments: JDBC URL, user, password, scope, key.
 */
public final class CrashingHolder {

    private CrashingHolder() {
    }

    public static void main(String[] args) throws Exception {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(args[0]);
        ds.setUser(args[1]);
        ds.setPassword(args[2]);
        IdempotencyKeys keys = IdempotencyKeys.builder().build();
        keys.execute(ds, args[3], args[4], "{\"amount\": 5}", (c, tx) -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO effect (idem_key, note) VALUES ('" + args[4] + "', 'crashed holder')");
            }
            System.out.println("WORKING");
            System.out.flush();
            new CountDownLatch(1).await();
            return StoredResponse.of(200, "never");
        });
    }
}
