package dev.outboxkit.reliability;

import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.LocalPostgres;
import dev.outboxkit.testkit.SecureGround;
import dev.outboxkit.testkit.SecureKafka;
import dev.outboxkit.testkit.TestCertificates;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The ground managed services give ({@link SecureGround}: SASL_SSL broker with ACLs, PostgreSQL with TLS and SCRAM
 * passwords only) for one test class, with outboxkit's roles on its PostgreSQL: each logs in with a random password of
 * its own and, in every database {@link #newDatabase()} makes, holds exactly the grants its README documents. The
 * set-up {@code ManagedGroundTest} and {@code WrongHostNameTest} share.
 */
final class ManagedRoles implements AutoCloseable {

    /** outboxkit's database roles, each with the grants of its README. */
    enum Role {
        WRITER("app_role", ""),
        POLLING_RELAY("poll_relay", ""),
        CDC_RELAY("cdc_relay", "REPLICATION "),
        CONSUMER("consumer_role", "");

        /** The role's name in PostgreSQL. */
        final String role;
        /** What {@code CREATE ROLE} gives it besides LOGIN and its password. */
        private final String attributes;

        Role(String role, String attributes) {
            this.role = role;
            this.attributes = attributes;
        }

        private void grant(Statement s) throws SQLException {
            switch (this) {
                case WRITER -> DocumentedGrants.writer(s, role, false);
                case POLLING_RELAY -> DocumentedGrants.pollingRelay(s, role);
                case CDC_RELAY -> {
                    DocumentedGrants.cdcRelay(s, role, false);
                    DocumentedGrants.cdcPublication(s);
                }
                case CONSUMER -> DocumentedGrants.consumer(s, role);
            }
        }
    }

    private final SecureGround ground;
    private final Map<Role, String> passwords = new EnumMap<>(Role.class);

    private ManagedRoles(SecureGround ground) {
        this.ground = ground;
    }

    /**
     * Starts the ground ({@code plainKafkaUsers}: the broker's PLAIN users and passwords) and creates {@code roles}
     * as login roles with passwords.
     */
    static ManagedRoles start(Map<String, String> plainKafkaUsers, List<Role> roles) throws SQLException {
        ManagedRoles managed = new ManagedRoles(SecureGround.start(plainKafkaUsers));
        try (Connection c = managed.postgres().connectAdmin("postgres"); Statement s = c.createStatement()) {
            for (Role r : roles) {
                String password = r.role + "-" + UUID.randomUUID();
                s.execute("CREATE ROLE " + r.role + " LOGIN " + r.attributes + "PASSWORD '" + password + "'");
                managed.passwords.put(r, password);
            }
        } catch (SQLException | RuntimeException e) {
            managed.close();
            throw e;
        }
        return managed;
    }

    TestCertificates certificates() {
        return ground.certificates();
    }

    SecureKafka kafka() {
        return ground.kafka();
    }

    LocalPostgres postgres() {
        return ground.postgres();
    }

    /** The password {@code role} logs in with. */
    String password(Role role) {
        String password = passwords.get(role);
        if (password == null) {
            throw new IllegalArgumentException(role + " was not created: pass it to ManagedRoles.start");
        }
        return password;
    }

    /**
     * A database of the test's own (the relays take every row of theirs): {@code statements} (the test's own tables
     * and their grants) run first, then the grants of each role created, in {@link Role} order (the CDC relay's with
     * its publication).
     */
    TestDatabase newDatabase(String... statements) throws SQLException {
        TestDatabase db = postgres().newDatabase();
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
            for (Role r : passwords.keySet()) {
                r.grant(s);
            }
        }
        return db;
    }

    /** Stops the broker and the server. */
    @Override
    public void close() {
        ground.close();
    }
}
