package dev.outboxkit.testkit;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5: {@code @ExtendWith(OutboxTestkitExtension.class)} and ask for a {@link TestDatabase}
 * (a fresh database with the outboxkit schema, dropped after the test), the shared
 * {@link TestKafka} or the shared {@link TestPostgres} as test or lifecycle method parameters.
 */
public final class OutboxTestkitExtension implements ParameterResolver {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(OutboxTestkitExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext c) {
        Class<?> type = p.getParameter().getType();
        return type == TestDatabase.class || type == TestKafka.class || type == TestPostgres.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext c) {
        Class<?> type = p.getParameter().getType();
        if (type == TestKafka.class) {
            return OutboxTestkit.kafka();
        }
        if (type == TestPostgres.class) {
            return OutboxTestkit.postgres();
        }
        if (type == TestDatabase.class) {
            TestDatabase db = OutboxTestkit.postgres().newDatabase();
            // Closed (pool shut, database dropped) when the test or class that asked for it ends.
            c.getStore(NS).put(db.name(), (AutoCloseable) () -> {
                try {
                    db.server().drop(db);
                } catch (RuntimeException e) {
                    // A database left on a throw-away test server is harmless; a failure here must not
                    // fail the test run after its tests passed (e.g. a replication slot still held).
                    org.slf4j.LoggerFactory.getLogger(OutboxTestkitExtension.class)
                            .warn("could not drop test database {}: {}", db.name(), e.getMessage());
                }
            });
            return db;
        }
        throw new ParameterResolutionException("cannot resolve " + type);
    }
}
