package dev.outboxkit.testkit;

import dev.outboxkit.testkit.fault.TcpFaultProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A primary and a synchronous streaming standby made from one set of PostgreSQL binaries, which fail over as
 * production PostgreSQL does: the standby is promoted. Two nodes, {@code node_a} (the first primary) and
 * {@code node_b}, each a {@link LocalPostgres} with its own data directory and port; the ports stay the same across
 * every failover, so one multi-host URL reaches whichever node is primary.
 *
 * <pre>{@code
 * try (ReplicatedPostgres pg = ReplicatedPostgres.builder().build()) {   // PostgreSQL 17, ~5 s
 *     TestDatabase db = pg.newDatabase();     // jdbc:postgresql://127.0.0.1:A,127.0.0.1:B/db?targetServerType=primary
 *     pg.failover();                          // crash the primary, promote the standby
 *     pg.rejoin();                            // the old primary comes back as the new primary's synchronous standby
 *     pg.switchover();                        // planned: clean stop, promote, ...
 *     pg.rejoin();
 * }
 * }</pre>
 *
 * <p>The standby is made the same way on every major version, without {@code pg_basebackup} (the embedded bundle has
 * none): a physical replication slot is created on the primary first, so the WAL from the backup's start is kept;
 * then, in one session, {@code pg_backup_start}, a copy of the data directory with Java's file API (leaving out what
 * PostgreSQL's documentation says to leave out), {@code pg_backup_stop}, whose label file is written into the copy as
 * {@code backup_label}; then {@code standby.signal}, {@code primary_conninfo} (with {@code application_name} = the
 * node's name) and {@code primary_slot_name}.
 *
 * <p><b>Synchronous commit without a standby.</b> The primary names its standby in
 * {@code synchronous_standby_names} (never {@code '*'}, which also matches a CDC relay's logical walsender), so a
 * COMMIT returns only once the standby has flushed it. While the set has no standby (after a promotion, until
 * {@link #rejoin()}), the primary accepts commits alone: a promoted node starts with no synchronous standby and
 * {@link #rejoin()} names the rejoined one again once it streams — the non-strict synchronous mode of Patroni. A
 * commit in that window exists on one node only.
 *
 * <p>On PostgreSQL 17 logical slots created with {@code failover => true} are copied to the standby
 * ({@code sync_replication_slots} there, {@code synchronized_standby_slots} naming the standby's physical slot on the
 * primary) and survive a promotion; PostgreSQL 15 has no such copies. Operations run one at a time (they are
 * synchronized); accessors and the URLs may be used from any thread, by any number of writers meanwhile.
 */
public final class ReplicatedPostgres extends TestPostgres {

    private static final Logger log = LoggerFactory.getLogger(ReplicatedPostgres.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final String HOST = "127.0.0.1";

    /** One of the two places a server runs: its name and port stay, its data directory is replaced at rejoin. */
    public static final class Node {

        private final String name;
        private final int port;
        private volatile LocalPostgres server;

        private Node(String name, int port) {
            this.name = name;
            this.port = port;
        }

        /** {@code node_a} or {@code node_b}: its {@code application_name} towards the primary. */
        public String name() {
            return name;
        }

        public int port() {
            return port;
        }

        /** The data directory in use now (a new one after each {@link ReplicatedPostgres#rejoin()}). */
        public Path dataDirectory() {
            return server.dataDirectory();
        }

        /** The server log of the data directory in use now. */
        public Path logFile() {
            return server.logFile();
        }

        /** {@code pg_ctl status}: does a postmaster run on the data directory? */
        public boolean isRunning() {
            return server.isRunning();
        }

        /** A URL of this node alone, e.g. to read from the standby (hot standby) or to check a slot on it. */
        public String jdbcUrl(String database) {
            return "jdbc:postgresql://" + HOST + ":" + port + "/" + database;
        }

        /** A superuser connection to this node alone. */
        public Connection connectAdmin(String database) throws SQLException {
            return server.connectAdmin(database);
        }

        private String slot() {
            return "outboxkit_standby_" + name;
        }

        private long count(String sql, Object... params) throws SQLException {
            try (Connection c = connectAdmin("postgres")) {
                return Sql.count(c, sql, params);
            }
        }

        private String string(String sql) throws SQLException {
            return strings(sql).get(0);
        }

        private List<String> strings(String sql) throws SQLException {
            try (Connection c = connectAdmin("postgres")) {
                return Sql.strings(c, sql);
            }
        }

        @Override
        public String toString() {
            return name + " (" + HOST + ":" + port + ")";
        }
    }

    private final Node a;
    private final Node b;
    private final int majorVersion;
    private final TcpFaultProxy endpoint;
    private volatile Node primary;

    private ReplicatedPostgres(Builder builder) {
        // each port stays unbound while its node is down, between a crash and the rejoin
        a = new Node("node_a", Ports.freeForRestarts());
        b = new Node("node_b", Ports.freeForRestarts());
        LocalPostgres.Builder first = builder.binaries.get().port(a.port).name(a.name);
        replicationSettings().forEach(first::serverConfig);
        builder.serverConfig.forEach(first::serverConfig);
        a.server = first.build();
        primary = a;
        TcpFaultProxy proxy = null;
        try {
            majorVersion = a.server.majorVersion();
            proxy = TcpFaultProxy.start("postgres-primary", HOST, a.port);
            endpoint = proxy;
            attachStandby(b);
        } catch (RuntimeException e) {
            if (proxy != null) {
                proxy.close();
            }
            closeQuietly(b);
            closeQuietly(a);
            throw e;
        }
    }

    /** Settings both nodes carry (the standby's copy keeps them), over the test defaults. */
    private static Map<String, String> replicationSettings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("hot_standby", "on");
        s.put("hot_standby_feedback", "on");
        return s;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a {@link ReplicatedPostgres}; {@link #build()} starts both nodes. */
    public static final class Builder {

        private java.util.function.Supplier<LocalPostgres.Builder> binaries = () -> LocalPostgres.builder().embeddedBinaries();
        private final Map<String, String> serverConfig = new LinkedHashMap<>();

        private Builder() {
        }

        /** PostgreSQL 17 from the zonky bundle on the class path. The default. */
        public Builder embeddedBinaries() {
            binaries = () -> LocalPostgres.builder().embeddedBinaries();
            return this;
        }

        /** The machine's {@code initdb}, {@code pg_ctl} and {@code postgres} on the PATH. */
        public Builder machineBinaries() {
            return binDirectory(null);
        }

        /** The machine's binaries from {@code binDir} (null: the PATH), e.g. {@code /usr/lib/postgresql/15/bin}. */
        public Builder binDirectory(Path binDir) {
            binaries = () -> LocalPostgres.builder().binDirectory(binDir);
            return this;
        }

        /**
         * An extra {@code postgresql.conf} setting of both nodes, after the test defaults ({@code wal_level=logical},
         * 300 connections, 32 slots and senders) and {@code hot_standby}, {@code hot_standby_feedback}.
         */
        public Builder serverConfig(String name, String value) {
            serverConfig.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Starts the primary, makes the standby from a base backup of it and waits until it is synchronous. */
        public ReplicatedPostgres build() {
            return new ReplicatedPostgres(this);
        }
    }

    /** The node that is primary now (after a crash, until {@link #promoteStandby()}, the one that crashed). */
    public Node primary() {
        return primary;
    }

    /** The other node: the standby, or, after a promotion until {@link #rejoin()}, the stopped old primary. */
    public Node standby() {
        return primary == a ? b : a;
    }

    /**
     * {@code pg_ctl stop -m immediate} on the primary: a crash (no checkpoint, clients see their connections drop).
     * Nothing is promoted: a test can leave a gap, as a managed service takes seconds to notice, then call
     * {@link #promoteStandby()}.
     *
     * @return how long the stop took
     */
    public synchronized Duration crashPrimary() {
        Node p = primary;
        if (!p.isRunning()) {
            throw new IllegalStateException("the primary " + p + " is not running: nothing to crash");
        }
        long begin = System.nanoTime();
        p.server.stopImmediately();
        return logTime(begin, "primary " + p + " crashed (pg_ctl stop -m immediate)");
    }

    /**
     * {@code pg_ctl promote -w} on the standby, once the primary is down: the standby replays every WAL record it
     * received, starts a new timeline and accepts writes; it has no synchronous standby until {@link #rejoin()}. The
     * {@link #endpoint()} then sends new connections to it and resets those to the old primary.
     *
     * @return how long the promotion took
     * @throws IllegalStateException when the primary still runs (two primaries would accept writes: crash it first,
     *                               or use {@link #switchover()}), or the standby does not run
     */
    public synchronized Duration promoteStandby() {
        Node oldPrimary = primary;
        Node next = standby();
        if (oldPrimary.isRunning()) {
            throw new IllegalStateException("the primary " + oldPrimary + " still runs: promoting " + next + " now would"
                    + " give two primaries. Call crashPrimary() first, or switchover() for a planned change");
        }
        if (!next.isRunning()) {
            throw new IllegalStateException("the standby " + next + " is not running: nothing to promote (rejoin() makes"
                    + " a new standby while a primary runs)");
        }
        long begin = System.nanoTime();
        next.server.promote();
        // a node made from a base backup carries no synchronous_standby_names (see attachStandby); reset anyway, so a
        // promoted node never waits for a standby that does not exist
        try (Connection c = next.connectAdmin("postgres"); Statement s = c.createStatement()) {
            s.execute("ALTER SYSTEM RESET synchronous_standby_names");
            if (majorVersion >= 17) {
                s.execute("ALTER SYSTEM RESET synchronized_standby_slots");
            }
            s.execute("SELECT pg_reload_conf()");
        } catch (SQLException e) {
            throw new IllegalStateException("promoted " + next + " but cannot clear its synchronous standby settings: "
                    + e.getMessage() + ". See " + next.logFile(), e);
        }
        primary = next;
        endpoint.redirect(HOST, next.port);
        return logTime(begin, "standby " + next + " promoted to timeline " + timeline() + " (the endpoint "
                + endpoint.address() + " follows it)");
    }

    /**
     * {@link #crashPrimary()} then {@link #promoteStandby()} at once: an unplanned failover.
     *
     * @return how long both took
     */
    public synchronized Duration failover() {
        long begin = System.nanoTime();
        crashPrimary();
        promoteStandby();
        return logTime(begin, "failover to " + primary);
    }

    /**
     * A planned switchover: the primary stops cleanly ({@code pg_ctl stop -m fast}: its walsender sends the remaining
     * WAL, shutdown checkpoint included, and waits for the standby to flush it), then the standby is promoted.
     * Nothing committed is lost; the old primary is stopped until {@link #rejoin()}.
     *
     * @return how long stop and promotion took
     * @throws IllegalStateException when a node does not run, or the standby did not receive the primary's last WAL
     */
    public synchronized Duration switchover() {
        Node oldPrimary = primary;
        Node next = standby();
        if (!oldPrimary.isRunning() || !next.isRunning()) {
            throw new IllegalStateException("a switchover needs both nodes running: " + describeNodes());
        }
        long begin = System.nanoTime();
        String lastLsn = currentLsn();
        oldPrimary.server.stop();
        awaitCondition("standby " + next + " received WAL up to " + lastLsn + " of the stopped primary",
                () -> next.count("SELECT (pg_last_wal_receive_lsn() >= ?::pg_lsn)::int", lastLsn) == 1, next);
        logTime(begin, "primary " + oldPrimary + " stopped cleanly");
        promoteStandby();
        return logTime(begin, "switchover to " + next);
    }

    /**
     * Makes the stopped node the primary's standby again: its data directory is replaced by a fresh base backup of
     * the primary (same port), it starts streaming, and the primary names it its synchronous standby again (on 17
     * also its slot in {@code synchronized_standby_slots}, so failover slots are copied to it). Returns once it is
     * the synchronous standby, so a test can fail over again.
     *
     * @return how long it took, base backup included
     * @throws IllegalStateException when the node still runs (only a stopped node is replaced) or does not become
     *                               a streaming synchronous standby within 120 s
     */
    public synchronized Duration rejoin() {
        Node node = standby();
        if (node.isRunning()) {
            throw new IllegalStateException(node + " is running: rejoin() replaces the data directory of a stopped node,"
                    + " after failover() or switchover() (" + describeNodes() + ")");
        }
        long begin = System.nanoTime();
        node.server.close();
        attachStandby(node);
        return logTime(begin, node + " rejoined as the synchronous standby of " + primary);
    }

    /** Base backup of the primary into a new data directory for {@code node}; starts it; makes it synchronous. */
    private void attachStandby(Node node) {
        Node source = primary;
        long begin = System.nanoTime();
        String slot = node.slot();
        Path dir;
        try {
            dir = Files.createTempDirectory("outboxkit-pg-" + node.name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a data directory for " + node.name + ": " + e.getMessage(), e);
        }
        try (Connection c = source.connectAdmin("postgres")) {
            // the slot comes first: it keeps every WAL segment from before the backup's start until the standby has it
            Sql.execute(c, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ?", slot);
            Sql.execute(c, "SELECT pg_create_physical_replication_slot(?, true)", slot);
            BaseBackup.take(c, "outboxkit standby " + node.name, source.dataDirectory(), dir);
            dropPrimarySettings(dir.resolve("postgresql.auto.conf"));
            Files.writeString(dir.resolve("standby.signal"), "");
        } catch (SQLException | IOException | RuntimeException e) {
            Dirs.deleteTree(dir);
            throw new IllegalStateException("cannot take a base backup of " + source + " into " + dir + " for "
                    + node.name + ": " + e.getMessage() + ". See " + source.logFile(), e);
        }
        Duration backup = since(begin);
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("primary_conninfo", "host=" + HOST + " port=" + source.port + " user=" + adminUser()
                + " application_name=" + node.name + " dbname=postgres");
        settings.put("primary_slot_name", slot);
        if (majorVersion >= 17) {
            settings.put("sync_replication_slots", "on");
        }
        // from here on the node owns the directory: close() deletes it
        node.server = LocalPostgres.overDataDirectory(node.name, source.server.binDirectory(), dir, node.port,
                "outboxkit standby of " + source.name, settings);
        node.server.start();
        awaitCondition(node + " streams from " + source, () -> source.count(
                "SELECT count(*) FROM pg_stat_replication WHERE application_name = ? AND state = 'streaming'",
                node.name) == 1, node);
        try (Connection c = source.connectAdmin("postgres"); Statement s = c.createStatement()) {
            // names are this class's own constants (letters, digits, underscore), never user input
            s.execute("ALTER SYSTEM SET synchronous_standby_names = '\"" + node.name + "\"'");
            if (majorVersion >= 17) {
                s.execute("ALTER SYSTEM SET synchronized_standby_slots = '" + slot + "'");
            }
            s.execute("SELECT pg_reload_conf()");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot name " + node.name + " the synchronous standby of " + source + ": "
                    + e.getMessage(), e);
        }
        awaitCondition(node + " is the synchronous standby of " + source, this::standbyIsSynchronous, node);
        log.info("base backup of {} for {} in {} ms; streaming synchronously after {} ms in all", source, node.name,
                backup.toMillis(), since(begin).toMillis());
    }

    /**
     * The copy carries the primary's {@code ALTER SYSTEM} settings: it must not name a synchronous standby of its own
     * (it would block every commit once promoted), so those lines go.
     */
    private static void dropPrimarySettings(Path autoConf) throws IOException {
        if (Files.exists(autoConf)) {
            Files.write(autoConf, Files.readAllLines(autoConf).stream()
                    .filter(line -> !line.strip().startsWith("synchronous_standby_names")
                            && !line.strip().startsWith("synchronized_standby_slots"))
                    .toList());
        }
    }

    /** Does the standby stream from the primary now, as its synchronous standby ({@code sync_state = 'sync'})? */
    public boolean standbyIsSynchronous() {
        try {
            return primary.count("SELECT count(*) FROM pg_stat_replication WHERE application_name = ?"
                    + " AND state = 'streaming' AND sync_state = 'sync'", standby().name) == 1;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * The primary's logical slots that fail over ({@code failover => true}, PostgreSQL 17) but are not yet on the
     * standby as synced, persistent slots: a failover now would lose them. Right after {@link #rejoin()} every such
     * slot is listed until its consumer has moved it past the new standby's base backup, whose WAL is the oldest the
     * standby has (PostgreSQL logs "could not synchronize replication slot ... the remote slot needs WAL at LSN ..."
     * until then). A slot's restart position moves to a running-transactions record the primary writes (every 15 s
     * with activity, or at once with {@code SELECT pg_log_standby_snapshot()}) when its consumer confirms a position
     * after it, at most one such record per confirmation: a streaming consumer gets there within a few of those
     * records; an idle slot never does.
     *
     * @throws IllegalStateException on PostgreSQL 16 and older, which copy no logical slot to a standby
     */
    public List<String> unsyncedFailoverSlots() {
        if (majorVersion < 17) {
            throw new IllegalStateException("PostgreSQL " + majorVersion + " copies no logical slot to a standby:"
                    + " failover slots need PostgreSQL 17");
        }
        try {
            List<String> slots = new java.util.ArrayList<>(primary.strings("SELECT slot_name FROM pg_replication_slots"
                    + " WHERE slot_type = 'logical' AND failover AND NOT temporary ORDER BY slot_name"));
            Node s = standby();
            if (s.isRunning()) {
                slots.removeAll(s.strings("SELECT slot_name FROM pg_replication_slots WHERE synced AND NOT temporary"));
            }
            return slots;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot compare the slots of " + describeNodes() + ": " + e.getMessage(), e);
        }
    }

    /** The primary's current WAL insert position ({@code pg_current_wal_lsn()}), e.g. {@code 0/3000148}. */
    public String currentLsn() {
        try {
            return primary.string("SELECT pg_current_wal_lsn()::text");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the WAL position of the primary " + primary + ": " + e.getMessage(), e);
        }
    }

    /** Has the standby replayed the WAL up to {@code lsn} (so a hot-standby read sees what was committed before)? */
    public boolean standbyReplayed(String lsn) {
        try {
            return standby().count("SELECT (pg_last_wal_replay_lsn() >= ?::pg_lsn)::int", lsn) == 1;
        } catch (SQLException e) {
            return false;
        }
    }

    /** The primary's timeline: 1 at the start, one more after each promotion. */
    public int timeline() {
        try {
            // pg_walfile_name names the segment on the timeline WAL is written to now: its first 8 hex digits
            String walFile = primary.string("SELECT pg_walfile_name(pg_current_wal_lsn())");
            return Integer.parseInt(walFile.substring(0, 8), 16);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the timeline of the primary " + primary + ": " + e.getMessage(), e);
        }
    }

    /** {@code pg_control_system().system_identifier}: the same on every node made from one {@code initdb}. */
    public long systemIdentifier() {
        try {
            return Long.parseLong(primary.string("SELECT system_identifier::text FROM pg_control_system()"));
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the system identifier of " + primary + ": " + e.getMessage(), e);
        }
    }

    /**
     * One address that always reaches the primary, as a managed service's host name does: a {@link TcpFaultProxy}
     * on loopback whose upstream {@link #promoteStandby()} switches to the promoted node (new connections go there,
     * open ones are reset). Its faults (blackhole, latency, ...) work as on any proxy; {@link #close()} closes it.
     */
    public TcpFaultProxy endpoint() {
        return endpoint;
    }

    /** {@code database}'s URL through the {@link #endpoint()}. */
    public String endpointJdbcUrl(String database) {
        return "jdbc:postgresql://" + endpoint.host() + ":" + endpoint.port() + "/" + database;
    }

    @Override
    protected String baseUrl() {
        return "jdbc:postgresql://" + HOST + ":" + a.port + "," + HOST + ":" + b.port + "/";
    }

    /**
     * pgjdbc's multi-host form, {@code jdbc:postgresql://127.0.0.1:A,127.0.0.1:B/database?targetServerType=primary}:
     * the driver tries both nodes and keeps the one that accepts writes.
     */
    @Override
    public String jdbcUrl(String database) {
        return super.jdbcUrl(database) + "?targetServerType=primary";
    }

    /** The {@link #endpoint()}'s port: the one address that follows the primary. */
    @Override
    public int port() {
        return endpoint.port();
    }

    @Override
    public int majorVersion() {
        return majorVersion;
    }

    @Override
    public String adminUser() {
        return "postgres";
    }

    @Override
    public String adminPassword() {
        return "";
    }

    /**
     * {@inheritDoc} Each node has its own {@code pg_hba.conf}: the rules go into both (a node made later by
     * {@link #rejoin()} copies them), and a running standby must refuse a wrong password too before this returns.
     */
    @Override
    public void createPasswordRole(String role, String password, String attributes) {
        super.createPasswordRole(role, password, attributes);
        Node standby = standby();
        if (standby.isRunning()) {
            awaitPasswordChecked(standby.jdbcUrl("postgres"), role, password, "standby " + standby);
        }
    }

    @Override
    void requirePassword(String role) {
        for (Node node : List.of(a, b)) {
            try {
                if (prependPasswordRules(node.dataDirectory().resolve("pg_hba.conf"), role) && node.isRunning()) {
                    try (Connection c = node.connectAdmin("postgres")) {
                        Sql.exec(c, "SELECT pg_reload_conf()");
                    }
                }
            } catch (IOException | SQLException e) {
                throw new IllegalStateException("cannot require the password of role " + role + " on " + node + ": "
                        + e.getMessage(), e);
            }
        }
    }

    @Override
    public String describe() {
        return "replicated PostgreSQL " + majorVersion + " (" + describeNodes() + "; endpoint " + endpoint.address() + ")";
    }

    private String describeNodes() {
        Node p = primary;
        Node s = standby();
        return "primary " + p + (p.server.isRunning() ? "" : " stopped") + ", standby " + s
                + (s.server.isRunning() ? "" : " stopped");
    }

    /** Closes the endpoint, stops both nodes and deletes their data directories. */
    @Override
    public void close() {
        try {
            endpoint.close();
        } finally {
            closeQuietly(standby());
            closeQuietly(primary);
        }
    }

    private static void closeQuietly(Node node) {
        LocalPostgres server = node.server;
        if (server != null) {
            try {
                server.close();
            } catch (RuntimeException e) {
                log.warn("closing {}: {}", node, e.toString());
            }
        }
    }

    private void awaitCondition(String what, Callable<Boolean> condition, Node watched) {
        try {
            Awaitility.await(what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                    .until(condition);
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException("not true after " + TIMEOUT.toSeconds() + " s: " + what + " ("
                    + describeNodes() + "; pg_stat_replication on the primary: " + replicationState() + "). See "
                    + watched.logFile(), e);
        }
    }

    private String replicationState() {
        try (Connection c = primary.connectAdmin("postgres");
             PreparedStatement s = c.prepareStatement("SELECT application_name, state, sync_state FROM pg_stat_replication");
             ResultSet rs = s.executeQuery()) {
            List<String> rows = new java.util.ArrayList<>();
            while (rs.next()) {
                rows.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3));
            }
            return rows.isEmpty() ? "no walsender" : rows.stream().collect(Collectors.joining(", "));
        } catch (SQLException e) {
            return "unreadable (" + e.getMessage() + ")";
        }
    }

    private static Duration since(long beginNanos) {
        return Duration.ofNanos(System.nanoTime() - beginNanos);
    }

    /** The time since {@code beginNanos}, logged at INFO after {@code what}. */
    private static Duration logTime(long beginNanos, String what) {
        Duration took = since(beginNanos);
        log.info("{} in {} ms", what, took.toMillis());
        return took;
    }
}
