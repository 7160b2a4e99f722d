package dev.outboxkit.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.ops.admin.Status;
import java.io.PrintWriter;
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
        description = "Backlog, age of the oldest unpublished event, dead letters, relay leases and replication slots.")
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
        try (HikariDataSource ds = db.dataSource("outbox-status", 1)) {
            status = db.admin(ds).status();
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(asMap(status)));
        } else {
            print(out, status);
        }
        return Main.OK;
    }

    /** The JSON shape {@code outbox status --json} has always printed (seconds rounded as before). */
    static Map<String, Object> asMap(Status s) {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("schema", s.schema());
        status.put("backlog", s.backlog());
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
        out.printf("backlog (unpublished events)  %s%n", status.backlog());
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
            out.printf("  %-28s active=%s wal_status=%s lag=%s bytes%n", s.name(), s.active(), s.walStatus(), s.lagBytes());
        }
    }
}
