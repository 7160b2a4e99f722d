package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.ReplicatedPostgres;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database fails over under the relays: a primary with a synchronous streaming standby ({@link ReplicatedPostgres},
 * PostgreSQL 17 from the embedded binaries and the machine's 15), the primary crashed (or stopped cleanly for a planned
 * switchover) and the standby promoted while writers commit, or while the relays drain a backlog. The relays reach the
 * database through a URL that names both nodes ({@code targetServerType=primary}) or through one endpoint that follows
 * the primary; the writers and the consumer use the multi-host URL. Two relay instances run (one publishes, one stands
 * by, or both share the partitions), so fencing and the liveness lock are on trial across the promotion too.
 *
 * <p>Each failover measures the time from the promotion to the first event committed after it being readable in Kafka
 * (the writer reconnecting included), and asserts it is at most {@link #RESUME_BOUND}; the checker then wants lost 0,
 * no duplicate effect and every aggregate's first publications in commit order. {@code -Dreliability.failovers=N} runs N
 * failovers per scenario (default 1; the figures in docs/production-topologies.md come from N = 5), and
 * {@code -Dreliability.topologies=all} every combination of relay, version and URL instead of one of each.
 */
class FailoverTest {

    private static final Logger log = LoggerFactory.getLogger(FailoverTest.class);
    /** The bound: publishing goes on this soon after the promotion. */
    static final Duration RESUME_BOUND = Duration.ofSeconds(10);
    /** How long the primary is down before the promotion: a managed service takes a moment to decide, too. */
    private static final Duration PROMOTION_DELAY = Duration.ofSeconds(2);
    private static final int FAILOVERS = Integer.getInteger("reliability.failovers", 1);
    private static final Map<String, ReplicatedPostgres> SERVERS = new LinkedHashMap<>();

    /** How the relays reach the database. */
    enum Url {
        /** {@code jdbc:postgresql://a,b/db?targetServerType=primary}. */
        MULTI_HOST,
        /** One address whose upstream follows the primary (a managed service's host name). */
        ENDPOINT
    }

    /** A replicated server shared by the scenarios of one kind of binaries ("embedded": 17, "machine": 15 here). */
    static synchronized ReplicatedPostgres server(String binaries) {
        return SERVERS.computeIfAbsent(binaries, b -> {
            ReplicatedPostgres pg = (b.equals("embedded") ? ReplicatedPostgres.builder().embeddedBinaries()
                    : ReplicatedPostgres.builder().machineBinaries()).build();
            Runtime.getRuntime().addShutdownHook(new Thread(pg::close, "failover-test-close-" + b));
            return pg;
        });
    }

    /** The ground of these scenarios: {@link #server} reached as {@code url} says. */
    record Replicated(ReplicatedPostgres pg, Url url) implements Ground {

        @Override
        public TestPostgres postgres() {
            return pg;
        }

        @Override
        public String relayJdbcUrl(TestDatabase db) {
            return url == Url.MULTI_HOST ? db.jdbcUrl() : pg.endpointJdbcUrl(db.name());
        }

        /** A primary that runs and a synchronous standby. */
        @Override
        public void heal() {
            if (!pg.primary().isRunning()) {
                pg.promoteStandby();
            }
            if (!pg.standby().isRunning()) {
                pg.rejoin();
            }
        }
    }

    static Stream<Arguments> steady() {
        if ("all".equals(System.getProperty("reliability.topologies"))) {
            List<Arguments> all = new ArrayList<>();
            for (RelayKind kind : List.of(RelayKind.POLL, RelayKind.CDC)) {
                for (String binaries : List.of("embedded", "machine")) {
                    for (Url url : Url.values()) {
                        all.add(Arguments.of(kind, binaries, url));
                    }
                }
            }
            return all.stream();
        }
        return Stream.of(Arguments.of(RelayKind.POLL, "embedded", Url.MULTI_HOST),
                Arguments.of(RelayKind.CDC, "machine", Url.ENDPOINT),
                Arguments.of(RelayKind.CDC, "embedded", Url.MULTI_HOST));
    }

    /** Unplanned failovers (crash, promotion) under four writers, then one planned switchover. */
    @ParameterizedTest(name = "{0} relay, {1} binaries, {2}")
    @MethodSource("steady")
    void thePrimaryFailsUnderWritersAndTheRelaysResumeOnThePromotedStandby(RelayKind kind, String binaries, Url url)
            throws Exception {
        ReplicatedPostgres pg = server(binaries);
        String name = "failover-" + kind.label() + "-" + pg.majorVersion() + "-" + url.name().toLowerCase(Locale.ROOT);
        try (Harness h = new Harness(name, 2, kind, Map.of(), Harness.RELAY_LEASE, new Replicated(pg, url))) {
            h.startWriters(4, Duration.ofMillis(5));
            await().atMost(Duration.ofMinutes(2)).until(() -> h.appliedCount() > 200);
            List<Resume> resumes = new ArrayList<>();
            for (int i = 1; i <= FAILOVERS; i++) {
                awaitSlotCopied(h, pg);
                long crashed = System.currentTimeMillis();
                pg.crashPrimary();
                Harness.sleep(PROMOTION_DELAY); // the fault's duration: no primary
                pg.promoteStandby();
                resumes.add(resumed(h, "failover", crashed));
                pg.rejoin();
                awaitFlowing(h, "after the rejoin " + i);
            }
            awaitSlotCopied(h, pg);
            long stopped = System.currentTimeMillis();
            pg.switchover();
            resumes.add(resumed(h, "switchover", stopped));
            pg.rejoin();
            awaitFlowing(h, "after the switchover's rejoin");
            History.Report report = h.healDrainAndCheck();
            report(h, kind, url, report, resumes, pg);
            assertClean(report);
            assertThat(resumes).as("time from each promotion to the first record published after it")
                    .allSatisfy(r -> assertThat(r.resumeMillis()).isLessThanOrEqualTo(RESUME_BOUND.toMillis()));
            // a planned switchover: the old primary's clean stop is not held up by a relay (a logical walsender whose
            // client does not confirm what it was sent keeps a shutdown waiting for wal_sender_timeout, 30 s here)
            assertThat(resumes.get(resumes.size() - 1).outageMillis()).as("switchover: stop to first record")
                    .isLessThanOrEqualTo(RESUME_BOUND.toMillis());
            if (kind.cdc()) {
                // before 17 the promoted standby has no slot: created again (every unpublished event a row); from 17
                // on the failover slot was synced and kept
                assertThat(slotsCreatedAgain(h)).as("slot created again after a promotion (each one before 17)")
                        .isEqualTo(pg.majorVersion() >= 17 ? 0 : FAILOVERS + 1);
            }
        }
    }

    static Stream<Arguments> draining() {
        return Stream.of(Arguments.of(RelayKind.CDC, "embedded", Url.ENDPOINT),
                Arguments.of(RelayKind.POLL, "machine", Url.ENDPOINT));
    }

    /** A backlog written while no relay ran; the primary fails while the relays drain it. */
    @ParameterizedTest(name = "{0} relay, {1} binaries, {2}")
    @MethodSource("draining")
    void thePrimaryFailsWhileTheRelaysDrainABacklog(RelayKind kind, String binaries, Url url) throws Exception {
        ReplicatedPostgres pg = server(binaries);
        String name = "failover-drain-" + kind.label() + "-" + pg.majorVersion() + "-" + url.name().toLowerCase(Locale.ROOT);
        try (Harness h = new Harness(name, 0, kind, Map.of(), Harness.RELAY_LEASE, new Replicated(pg, url))) {
            h.startWriters(4, Duration.ZERO);
            await().atMost(Duration.ofMinutes(2)).until(() -> h.count("SELECT count(*) FROM outbox_event") >= 8_000);
            h.startRelay("relay-1");
            h.startRelay("relay-2");
            await("the relays publish the backlog").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(50))
                    .until(() -> h.appliedCount() > 1_000);
            long left = h.count("SELECT count(*) FROM outbox_event");
            long crashed = System.currentTimeMillis();
            pg.crashPrimary();
            Harness.sleep(PROMOTION_DELAY);
            pg.promoteStandby();
            Resume resume = resumed(h, "failover while draining", crashed);
            pg.rejoin();
            History.Report report = h.healDrainAndCheck();
            report(h, kind, url, report, List.of(resume), pg);
            assertClean(report);
            assertThat(left).as("the failover came while a backlog was left").isPositive();
            assertThat(resume.resumeMillis()).isLessThanOrEqualTo(RESUME_BOUND.toMillis());
        }
    }

    /**
     * How long after the promotion (just done) the relays publish again: the first record appended to the topic after
     * it. An event committed then (a probe, as soon as the new primary takes it) is awaited too and logged: behind a
     * backlog it waits for the rows before it.
     */
    private static Resume resumed(Harness h, String what, long faultMillis) {
        long promotedMillis = System.currentTimeMillis();
        long promoted = System.nanoTime();
        Map<Integer, Long> ends = h.endOffsets();
        UUID probe = h.writeProbe("probe-" + UUID.randomUUID(), Duration.ofMinutes(1));
        long committed = System.nanoTime();
        long firstRecord = h.awaitAppendedAfter(ends, Duration.ofMinutes(2));
        long firstRecordMillis = System.currentTimeMillis() - (System.nanoTime() - firstRecord) / 1_000_000;
        long published = h.awaitPublished(probe, Duration.ofMinutes(2));
        Resume resume = new Resume(what, faultMillis, promotedMillis, (firstRecord - promoted) / 1_000_000,
                (published - promoted) / 1_000_000, firstRecordMillis - faultMillis);
        log.info("scenario {}: {}: first record {} ms after the promotion ({} ms after the fault began); a probe committed "
                + "{} ms and published {} ms after the promotion", h.name, what, resume.resumeMillis(),
                resume.outageMillis(), (committed - promoted) / 1_000_000, resume.probeMillis());
        return resume;
    }

    /**
     * One promotion: {@code what} it was (failover, switchover, failover while draining), when the fault began (the
     * crash, or the clean stop) and when the standby was promoted (epoch millis), how long from the promotion until
     * the first record was published, and until an event committed right after it was; and from the fault's beginning
     * to that first record (the promotion's wait included: a clean stop, or the gap left before promoting).
     */
    record Resume(String what, long faultMillis, long promotedMillis, long resumeMillis, long probeMillis,
                  long outageMillis) {

        /**
         * The first change to not ready after the fault of a relay that was ready when it began, in ms after it; -1
         * when none was ready then or none showed the change (an instance still starting up from the previous
         * promotion would otherwise count its next one).
         */
        long notReadyMillis(List<List<Harness.Readiness>> relays) {
            return relays.stream().filter(changes -> readyAt(changes, faultMillis)).flatMap(List::stream)
                    .filter(r -> !r.ready() && r.epochMillis() >= faultMillis)
                    .mapToLong(r -> r.epochMillis() - faultMillis).min().orElse(-1);
        }

        private static boolean readyAt(List<Harness.Readiness> changes, long epochMillis) {
            boolean ready = false;
            for (Harness.Readiness r : changes) {
                if (r.epochMillis() >= epochMillis) {
                    break;
                }
                ready = r.ready();
            }
            return ready;
        }

        /**
         * The first change back to ready of a relay not ready at the fault or after it, in ms after the promotion (0
         * when it came before the promotion command returned: the server takes writes a moment before); -1 when none
         * showed one.
         */
        long readyMillis(List<List<Harness.Readiness>> relays) {
            long first = Long.MAX_VALUE;
            for (List<Harness.Readiness> changes : relays) {
                boolean down = !readyAt(changes, faultMillis); // an instance still starting counts as gone down
                for (Harness.Readiness r : changes) {
                    if (r.epochMillis() < faultMillis) {
                        continue;
                    }
                    if (!r.ready()) {
                        down = true;
                    } else if (down) {
                        first = Math.min(first, r.epochMillis());
                        break;
                    }
                }
            }
            return first == Long.MAX_VALUE ? -1 : Math.max(0, first - promotedMillis);
        }
    }

    /**
     * With the CDC relay on PostgreSQL 17 a failover keeps the slot only once the standby holds a synced copy: right
     * after a rejoin that takes a running-transactions record past the standby's start (one is logged here rather than
     * waited for). Before 17 there is nothing to wait for: the relay creates the slot again.
     */
    private static void awaitSlotCopied(Harness h, ReplicatedPostgres pg) {
        if (!h.kind.cdc() || pg.majorVersion() < 17) {
            return;
        }
        await("failover slot copied to the standby").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    try (java.sql.Connection c = pg.connectAdmin("postgres"); java.sql.Statement st = c.createStatement()) {
                        st.execute("SELECT pg_log_standby_snapshot()");
                    }
                    return pg.unsyncedFailoverSlots().isEmpty();
                });
    }

    private static void awaitFlowing(Harness h, String what) throws Exception {
        long before = h.appliedCount();
        await("events applied " + what).atMost(Duration.ofMinutes(2)).until(() -> h.appliedCount() > before + 100);
    }

    private static void assertClean(History.Report report) {
        assertThat(report.ok()).as(report.summary()).isTrue();
        assertThat(report.lost()).isZero();
        assertThat(report.duplicateEffects()).isZero();
        assertThat(report.orderViolations()).isZero();
        assertThat(report.publicationOrderViolations()).isZero();
    }

    /** One scenario's figures, for the printed line and the evidence report. */
    record Measured(String relay, int postgres, String url, List<Resume> resumes, List<Long> notReady, List<Long> ready,
                    History.Report report, long recreatedSlots) {
    }

    private static final List<Measured> MEASURED = new ArrayList<>();

    /** One line per scenario (FAILOVER …) with each promotion's figures and the checker's; kept for the report. */
    private static void report(Harness h, RelayKind kind, Url url, History.Report report, List<Resume> resumes,
                               ReplicatedPostgres pg) throws Exception {
        List<List<Harness.Readiness>> relays = h.relayProcesses().stream().map(Harness::readiness).toList();
        List<Long> notReady = resumes.stream().map(r -> r.notReadyMillis(relays)).toList();
        List<Long> ready = resumes.stream().map(r -> r.readyMillis(relays)).toList();
        long recreated = slotsCreatedAgain(h);
        Measured m = new Measured(kind.label(), pg.majorVersion(), url.name().toLowerCase(Locale.ROOT).replace('_', '-'),
                resumes, notReady, ready, report, recreated);
        synchronized (MEASURED) {
            MEASURED.add(m);
        }
        String line = String.format("FAILOVER %s: PostgreSQL %d | %s | first record after each promotion %s ms, a new "
                        + "event %s ms; not ready %s ms after each fault, ready %s ms after each promotion | %s", h.name,
                pg.majorVersion(), resumes.stream().map(Resume::what).toList(),
                resumes.stream().map(Resume::resumeMillis).toList(), resumes.stream().map(Resume::probeMillis).toList(),
                notReady, ready, report.summary());
        System.out.println(line);
        log.info(line);
    }

    /**
     * With more than one failover per scenario (or {@code -Dreliability.report.dir}), the figures go to
     * {@code docs/evidence/failover-<UTC time>.md}: one row per scenario and one per promotion.
     */
    @AfterAll
    static void writeReport() throws Exception {
        String dir = System.getProperty("reliability.report.dir");
        if (MEASURED.isEmpty() || (FAILOVERS < 2 && dir == null)) {
            return;
        }
        Path folder = Path.of(dir != null ? dir : "../docs/evidence");
        Files.createDirectories(folder);
        String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmm").withZone(ZoneOffset.UTC).format(Instant.now());
        Path file = folder.resolve("failover-" + stamp + ".md");
        StringBuilder out = new StringBuilder("# Failover of the database under the relays\n\n");
        out.append("Command: `./mvnw -B -o -pl reliability verify -Dtest=FailoverTest -Dreliability.failovers=")
                .append(FAILOVERS).append(System.getProperty("reliability.topologies") == null ? ""
                        : " -Dreliability.topologies=" + System.getProperty("reliability.topologies")).append("`\n\n");
        out.append("Finished ").append(Instant.now()).append(" on a 2-core machine; load average at the end ")
                .append(loadAverage()).append(". A primary with a synchronous streaming standby (`ReplicatedPostgres`), ")
                .append("four writers, two relay instances in child JVMs (lease ").append(Harness.RELAY_LEASE.toSeconds())
                .append(" s), a DedupeConsumer; the primary crashed (`pg_ctl stop -m immediate`), the standby promoted ")
                .append(PROMOTION_DELAY.toSeconds()).append(" s later, the old primary rejoined as the new standby; each ")
                .append("steady scenario ends with a planned switchover. *Resume*: from the end of the promotion to the ")
                .append("first record appended to the topic; *new event*: to the record of an event committed right after ")
                .append("the promotion; readiness from the relays' own health, polled every 50 ms (the first instance ")
                .append("to change; *not ready* counts only an instance ready when the fault began, *ready* one not ready ")
                .append("at or after it).\n\n");
        out.append("| relay | PostgreSQL | URL | promotions | resume p50 / max (ms) | new event p50 / max (ms) | ")
                .append("publishing stopped, fault to first record, p50 / max (ms) | ")
                .append("duplicates | lost | order violations | slot created again (times) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Measured m : MEASURED) {
            List<Long> resume = m.resumes().stream().map(Resume::resumeMillis).sorted().toList();
            List<Long> probe = m.resumes().stream().map(Resume::probeMillis).sorted().toList();
            List<Long> outage = m.resumes().stream().map(Resume::outageMillis).sorted().toList();
            out.append("| ").append(m.relay()).append(" | ").append(m.postgres()).append(" | ").append(m.url()).append(" | ")
                    .append(m.resumes().stream().map(Resume::what).distinct().map(w -> w + " ×"
                            + m.resumes().stream().filter(r -> r.what().equals(w)).count()).toList())
                    .append(" | ").append(median(resume)).append(" / ").append(resume.get(resume.size() - 1))
                    .append(" | ").append(median(probe)).append(" / ").append(probe.get(probe.size() - 1))
                    .append(" | ").append(median(outage)).append(" / ").append(outage.get(outage.size() - 1))
                    .append(" | ").append(m.report().duplicateDeliveries()).append(" of ").append(m.report().deliveries())
                    .append(" | ").append(m.report().lost()).append(" | ")
                    .append(m.report().orderViolations() + m.report().publicationOrderViolations()).append(" | ")
                    .append(m.relay().equals("poll") ? "–" : Long.toString(m.recreatedSlots())).append(" |\n");
        }
        out.append("\n## Each promotion\n\n| relay | PostgreSQL | URL | what | resume (ms) | new event (ms) | fault to first ")
                .append("record (ms) | not ready after the fault (ms; of an instance ready at the fault) | ready after the promotion (ms) |\n")
                .append("|---|---|---|---|---|---|---|---|---|\n");
        for (Measured m : MEASURED) {
            for (int i = 0; i < m.resumes().size(); i++) {
                Resume r = m.resumes().get(i);
                out.append("| ").append(m.relay()).append(" | ").append(m.postgres()).append(" | ").append(m.url())
                        .append(" | ").append(r.what()).append(" | ").append(r.resumeMillis()).append(" | ")
                        .append(r.probeMillis()).append(" | ").append(r.outageMillis()).append(" | ")
                        .append(dash(m.notReady().get(i))).append(" | ")
                        .append(dash(m.ready().get(i))).append(" |\n");
            }
        }
        out.append("\n## Checker\n\n");
        for (Measured m : MEASURED) {
            out.append("- ").append(m.relay()).append(", PostgreSQL ").append(m.postgres()).append(", ").append(m.url())
                    .append(": ").append(m.report().summary()).append('\n');
        }
        Files.writeString(file, out);
        log.info("failover report written to {}", file.toAbsolutePath());
    }

    /** How often the CDC relays created their slot again (or adopted a copy): each time they say so once, at WARN. */
    private static long slotsCreatedAgain(Harness h) {
        return h.relayProcesses().stream().mapToLong(p -> p.output().lines()
                .filter(l -> l.contains(". Created it at ") || l.contains(". Adopted it at ")).count()).sum();
    }

    private static long median(List<Long> sorted) {
        return sorted.get((sorted.size() - 1) / 2);
    }

    private static String dash(long millis) {
        return millis < 0 ? "–" : Long.toString(millis);
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }
}
