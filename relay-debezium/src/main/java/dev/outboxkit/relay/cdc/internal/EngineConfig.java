package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.runtime.DatabaseLogin;
import java.util.Map;
import java.util.Properties;

/**
 * Debezium's configuration for the relay. Every setting that decides whether events can be lost,
 * re-sent wholesale or left to pile up in the WAL is set explicitly here, whatever Debezium's default.
 */
final class EngineConfig {

    /** Debezium's heartbeat records go to topics with this prefix; the relay never publishes them. */
    static final String HEARTBEAT_TOPIC_PREFIX = "__outboxkit-heartbeat";
    static final String TOPIC_PREFIX = "outboxkit";

    private EngineConfig() {
    }

    /**
     * @param terms          the slot, its publication and tables
     * @param login          the login of Debezium's connections
     * @param tuning         Debezium's pace
     * @param target         the one host Debezium connects to in the current session (a multi-host URL resolved: {@link JdbcTarget#at})
     * @param storeContextId the session's key: of its offset store ({@link PostgresOffsetStore}) and its sockets
     *                       ({@link DebeziumSockets})
     */
    static Properties properties(SlotTerms terms, DatabaseLogin login, EngineTuning tuning, JdbcTarget target,
                                 String storeContextId) {
        Properties p = new Properties();
        p.setProperty("name", "outboxkit-cdc-" + terms.slotName());
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("tasks.max", "1");

        // Offsets: in PostgreSQL, fenced, flushed after the acks (the relay marks only acknowledged,
        // transaction-complete positions as processed).
        p.setProperty("offset.storage", PostgresOffsetStore.class.getName());
        p.setProperty(PostgresOffsetStore.CONTEXT_PROPERTY, storeContextId);
        p.setProperty("offset.flush.interval.ms", Long.toString(tuning.offsetFlushInterval().toMillis()));
        p.setProperty("offset.flush.timeout.ms", "30000");

        where(p, login, target, storeContextId);
        safeDefaults(p, terms);

        // Heartbeats: every interval Debezium inserts a beat into our table (replacing the last one);
        // the insert travels through the WAL, so the slot advances even while the outbox is idle.
        p.setProperty("heartbeat.interval.ms", Long.toString(tuning.heartbeatInterval().toMillis()));
        p.setProperty("heartbeat.action.query", heartbeatQuery(terms));

        // Latency and throughput: big batches under load, a lone event waits at most pollInterval.
        p.setProperty("max.batch.size", Integer.toString(tuning.maxBatchSize()));
        p.setProperty("max.queue.size", Integer.toString(tuning.maxBatchSize() * 4));
        p.setProperty("poll.interval.ms", Long.toString(Math.max(1, tuning.pollInterval().toMillis())));
        p.setProperty("record.processing.threads", "1");

        restarts(p);
        return p;
    }

    /** Where to read: the one host of {@code target}, with the relay's login and the URL's driver options. */
    private static void where(Properties p, DatabaseLogin login, JdbcTarget target, String storeContextId) {
        p.setProperty("database.hostname", target.host().host());
        p.setProperty("database.port", Integer.toString(target.host().port()));
        p.setProperty("database.dbname", target.database());
        p.setProperty("database.user", login.user());
        if (login.password() != null) {
            p.setProperty("database.password", login.password().reveal());
        }
        // TCP keepalive on Debezium's connections, the replication connection included, as on the relay's pool
        // (ConnectionPools); a tcpKeepAlive in the URL is handed on below and wins.
        p.setProperty("database.tcpKeepAlive", "true");
        for (Map.Entry<String, String> option : target.driverOptions().entrySet()) {
            p.setProperty("database." + option.getKey(), option.getValue());
        }
        // Every socket of Debezium's connections through DebeziumSockets, so a session that ends on a broken database
        // connection cuts its replication connection at once (a server's clean shutdown would wait for it otherwise).
        p.setProperty("database.socketFactory", DebeziumSockets.class.getName());
        p.setProperty("database.socketFactoryArg", storeContextId);
        p.setProperty("topic.prefix", TOPIC_PREFIX);
        p.setProperty("topic.heartbeat.prefix", HEARTBEAT_TOPIC_PREFIX);
    }

    private static void safeDefaults(Properties p, SlotTerms terms) {
        // Safe defaults, set explicitly: pgoutput (Debezium still defaults to decoderbufs), our own
        // publication (inserts into the outbox and the heartbeat table only), never a snapshot of the
        // table (the relay's own start-up drain publishes existing rows once, through the same mapping),
        // and a slot that outlives the process.
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", terms.slotName());
        p.setProperty("slot.drop.on.stop", "false");
        p.setProperty("publication.name", terms.publicationName());
        p.setProperty("publication.autocreate.mode", "disabled");
        p.setProperty("snapshot.mode", "no_data");
        p.setProperty("lsn.flush.mode", "connector");
        p.setProperty("offset.mismatch.strategy", "no_validation");
        p.setProperty("table.include.list", terms.schema() + "\\.outbox_event," + terms.schema() + "\\.outbox_cdc_heartbeat");
        p.setProperty("message.prefix.include.list", ChangeDecoder.MESSAGE_PREFIX);
        p.setProperty("skipped.operations", "u,d,t");
        p.setProperty("tombstones.on.delete", "false");
        p.setProperty("provide.transaction.metadata", "false");
        p.setProperty("include.unknown.datatypes", "false");
        // payload_bytes (bytea) as the raw bytes: ChangeDecoder publishes them unchanged (the default, pinned).
        p.setProperty("binary.handling.mode", "bytes");
        p.setProperty("schema.name.adjustment.mode", "none");
        p.setProperty("field.name.adjustment.mode", "none");
    }

    private static void restarts(Properties p) {
        // After a lost connection (walsender terminated, server restarted) Debezium restarts its task
        // from the stored offset; keep that quick.
        p.setProperty("retriable.restart.connector.wait.ms", "1000");
        p.setProperty("errors.max.retries", "-1");
        p.setProperty("errors.retry.delay.initial.ms", "300");
        p.setProperty("errors.retry.delay.max.ms", "5000");
        p.setProperty("slot.max.retries", "6");
        p.setProperty("slot.retry.delay.ms", "2000");
        p.setProperty("status.update.interval.ms", "10000");
    }

    /** Replaces this slot's previous beat with a new one, in one statement (an insert, so pgoutput sends it). */
    static String heartbeatQuery(SlotTerms terms) {
        String table = terms.table(OutboxTables.CDC_HEARTBEAT);
        String slot = "'" + terms.slotName() + "'"; // validated identifier: no quote can occur in it
        return "WITH previous AS (DELETE FROM " + table + " WHERE slot_name = " + slot + ") INSERT INTO " + table
                + " (slot_name, beat_at) VALUES (" + slot + ", now())";
    }
}
