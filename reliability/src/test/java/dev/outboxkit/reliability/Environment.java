package dev.outboxkit.reliability;

import dev.outboxkit.testkit.KafkaProcess;
import dev.outboxkit.testkit.LocalPostgres;
import dev.outboxkit.testkit.Ports;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import dev.outboxkit.testkit.fault.TcpFaultProxy;

/**
 * The servers every scenario of this suite shares, started once per JVM: a PostgreSQL the suite
 * owns (so it can crash it), a Kafka node in a child JVM whose client listener advertises a fault
 * proxy, and a fault proxy in front of PostgreSQL for the relays. Scenarios get their own
 * database, topic, roles and consumer group. Closed by a shutdown hook.
 */
final class Environment implements Ground {

    private static Environment instance;

    final LocalPostgres pg;
    final TcpFaultProxy pgProxy;
    final TcpFaultProxy kafkaProxy;
    final KafkaProcess kafka;

    private Environment() {
        pg = LocalPostgres.builder().build();
        pgProxy = TcpFaultProxy.start("relay-pg", pg.host(), pg.port());
        int brokerPort = Ports.free();
        kafkaProxy = TcpFaultProxy.start("relay-kafka", "127.0.0.1", brokerPort);
        kafka = KafkaProcess.builder().name("reliability-kafka").port(brokerPort)
                .advertisedAddress(kafkaProxy.host(), kafkaProxy.port()).build();
    }

    static synchronized Environment get() {
        if (instance == null) {
            instance = new Environment();
            Environment env = instance;
            Runtime.getRuntime().addShutdownHook(new Thread(env::close, "reliability-env-close"));
        }
        return instance;
    }

    @Override
    public TestPostgres postgres() {
        return pg;
    }

    /** Through the relays' fault proxy. */
    @Override
    public String relayJdbcUrl(TestDatabase db) {
        return db.jdbcUrlVia(pgProxy.host(), pgProxy.port());
    }

    @Override
    public void heal() {
        healAll();
    }

    /** Every fault off, PostgreSQL running: the state each scenario starts from. */
    void healAll() {
        pgProxy.heal();
        kafkaProxy.heal();
        if (!pg.isRunning()) {
            pg.start();
        }
    }

    private void close() {
        try {
            kafka.close();
        } finally {
            kafkaProxy.close();
            pgProxy.close();
            pg.close();
        }
    }
}
