package dev.outboxkit.writer;

import dev.outboxkit.testkit.TestDatabase;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;
import javax.sql.DataSource;

/** Small helpers shared by the writer's tests. */
final class TestSupport {

    private TestSupport() {
    }

    /** {@code account(id int, balance bigint)} with {@code n} accounts of {@code balance} each. */
    static void accounts(TestDatabase db, int n, long balance) throws SQLException {
        db.exec("CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0))",
                "INSERT INTO account SELECT g, " + balance + " FROM generate_series(1, " + n + ") g");
    }

    static long balance(TestDatabase db, int account) throws SQLException {
        return db.count("SELECT balance FROM account WHERE id = " + account);
    }

    static void move(Connection c, int from, int to, long amount) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE account SET balance = balance - " + amount + " WHERE id = " + from);
            s.executeUpdate("UPDATE account SET balance = balance + " + amount + " WHERE id = " + to);
        }
    }

    static OutboxMessage event(String aggregateId, int n) {
        return OutboxMessage.builder("account", aggregateId, "MoneyMoved")
                .payloadJson("{\"n\": " + n + ", \"note\": \"" + "x".repeat(40) + "\"}")
                .build();
    }

    static List<OutboxMessage> events(String aggregateId, int count) {
        List<OutboxMessage> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(event(aggregateId, i));
        }
        return out;
    }

    /**
     * A data source that hands out the same connection every time (close() is ignored), so a
     * {@link WireTap} counts exactly the round trips of the code under test.
     */
    static DataSource singleConnection(Connection connection) {
        Connection shared = (Connection) Proxy.newProxyInstance(TestSupport.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        return new DataSource() {
            @Override
            public Connection getConnection() {
                return shared;
            }

            @Override
            public Connection getConnection(String user, String password) {
                return shared;
            }

            @Override
            public PrintWriter getLogWriter() {
                return null;
            }

            @Override
            public void setLogWriter(PrintWriter out) {
            }

            @Override
            public void setLoginTimeout(int seconds) {
            }

            @Override
            public int getLoginTimeout() {
                return 0;
            }

            @Override
            public Logger getParentLogger() {
                return Logger.getGlobal();
            }

            @Override
            public <T> T unwrap(Class<T> iface) {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean isWrapperFor(Class<?> iface) {
                return false;
            }
        };
    }
}
