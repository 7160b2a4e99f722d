package dev.outboxkit.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.ops.admin.Status;
import dev.outboxkit.ops.admin.CdcRelaySlot;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "status", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = "Backlog (counted up to 100,000 events, estimated beyond), age of the oldest unpublished event, dead letters, relay leases, replication slots, and the "
                + "CDC relay's slots: where each was last streamed, whether a promoted standby would keep it.")
final class StatusCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    Options.Database db;

    @Option(names = "--json", description = "Print JSON instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        Status status;
        List<CdcRelaySlot> cdcSlots;
        String cdcSlotsNote = null;
        try (HikariDataSource ds = db.dataSource("outbox-status", 1)) {
            OutboxAdmin admin = db.admin(ds);
            status = admin.status();
            try {
                cdcSlots = admin.cdcRelaySlots();
            } catch (MissingGrantsException e) {
                cdcSlots = List.of();
                cdcSlotsNote = "not shown: " + String.join("; ", e.grants());
            } catch (SQLException e) {
                if (!"42703".equals(e.getSQLState())) {
                    throw e;
                }
                cdcSlots = List.of();
                cdcSlotsNote = "not shown: the schema is older than version 11 (run outbox migrate)";
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> map = asMap(status);
            map.put("cdcRelaySlots", cdcSlots(cdcSlots));
            if (cdcSlotsNote != null) {
                map.put("cdcRelaySlotsNote", cdcSlotsNote);
            }
            // the keys' old names, deprecated: the same values, until 0.2.0
            map.put("walRelaySlots", map.get("cdcRelaySlots"));
            if (cdcSlotsNote != null) {
                map.put("walRelaySlotsNote", cdcSlotsNote);
            }
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(map));
        } else {
            print(out, status);
            print(out, cdcSlots, cdcSlotsNote);
        }
        return Main.OK;
    }

    private static List<Map<String, Object>> cdcSlots(List<CdcRelaySlot> slots) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (CdcRelaySlot slot : slots) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("slot", slot.name());
            m.put("present", slot.present());
            m.put("active", slot.active());
            m.put("lastServer", slot.lastServer());
            m.put("failoverReady", slot.failoverReady());
            m.put("failover", slot.failoverDetail());
            m.put("recreatedAt", slot.recreatedAt() == null ? null : slot.recreatedAt().toString());
            m.put("recreatedReason", slot.recreatedReason());
            m.put("walOnlySeenAt", slot.walOnlySeenAt() == null ? null : slot.walOnlySeenAt().toString());
            m.put("walOnlySeen", slot.walOnlySeen());
            out.add(m);
        }
        return out;
    }

    private static void print(PrintWriter out, List<CdcRelaySlot> slots, String note) {
        out.printf("CDC relay slots               %s%n", note != null ? note : slots.size());
        for (CdcRelaySlot s : slots) {
            out.printf("  %-28s %s, last streamed on %s%n", s.name(), !s.present() ? "missing on this server"
                    : s.active() ? "streamed" : "not streamed now", s.lastServer() == null ? "-" : s.lastServer());
            out.printf("  %-28s failover: %s%n", "", s.failoverDetail());
            if (s.recreatedAt() != null) {
                out.printf("  %-28s created again at %s: %s%n", "", s.recreatedAt(), s.recreatedReason());
            }
            if (s.walOnlySeenAt() != null) {
                out.printf("  %-28s events only in the WAL since %s (%s): never fast-forwarded, never created again%n", "",
                        s.walOnlySeenAt(), s.walOnlySeen());
            }
        }
    }

    /** The JSON shape {@code outbox status --json} has always printed (seconds rounded as before). */
    static Map<String, Object> asMap(Status s) {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("schema", s.schema());
        status.put("backlog", s.backlog());
        status.put("backlogExact", s.backlogExact());
        status.put("oldestUnpublishedAgeSeconds", ageSeconds(s.oldestUnpublishedAge()));
        status.put("deadLetters", s.deadLetters());
        List<Map<String, Object>> leases = new ArrayList<>();
        for (Status.Lease lease : s.leases()) {
            Map<String, Object> l = new LinkedHashMap<>();
            l.put("lease", lease.key());
            l.put("holder", lease.holder());
            l.put("fence", lease.fence());
            l.put("valid", lease.valid());
            l.put("expiresInSeconds", Math.round(lease.expiresIn().toNanos() / 1e8) / 10.0);
            leases.add(l);
        }
        status.put("leases", leases);
        List<Map<String, Object>> slots = new ArrayList<>();
        for (Status.ReplicationSlot slot : s.replicationSlots()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("slot", slot.name());
            m.put("active", slot.active());
            m.put("walStatus", slot.walStatus());
            m.put("lagBytes", slot.lagBytes());
            m.put("retainedBytes", slot.retainedBytes());
            slots.add(m);
        }
        status.put("replicationSlots", slots);
        return status;
    }

    /** Seconds as {@code outbox status} has always shown an age: to the millisecond. */
    private static Double ageSeconds(Duration age) {
        return age == null ? null : Math.round(age.toNanos() / 1e6) / 1000.0;
    }

    private static void print(PrintWriter out, Status status) {
        out.printf("schema                        %s%n", status.schema());
        out.printf("backlog (unpublished events)  %s%n", status.backlogExact() ? String.valueOf(status.backlog())
                : String.format(java.util.Locale.ROOT, "about %,d (estimate: more than %,d, not counted)", status.backlog(),
                        Status.EXACT_BACKLOG_LIMIT));
        Double age = ageSeconds(status.oldestUnpublishedAge());
        out.printf("oldest unpublished            %s%n", age == null ? "-" : age + " s ago");
        out.printf("dead letters                  %s%n", status.deadLetters());
        out.printf("leases                        %d%n", status.leases().size());
        status.validLeasesByHolder().forEach((holder, n) -> out.printf("  %-40s %d lease%s%n", holder, n, n == 1 ? "" : "s"));
        long expired = status.expiredLeases();
        if (expired > 0) {
            out.printf("  %-40s %d%n", "(expired, free to take)", expired);
        }
        out.printf("replication slots             %d%n", status.replicationSlots().size());
        for (Status.ReplicationSlot s : status.replicationSlots()) {
            out.printf("  %-28s active=%s wal_status=%s lag=%s bytes retained=%s bytes%n", s.name(), s.active(), s.walStatus(),
                    s.lagBytes(), s.retainedBytes());
        }
    }
}
