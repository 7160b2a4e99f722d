package dev.outboxkit.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Identifiers;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
        Map<String, Object> status;
        try (HikariDataSource ds = db.dataSource("outbox-status", 1); Connection c = ds.getConnection()) {
            status = read(c, db.schema);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(status));
        } else {
            print(out, status);
        }
        return Main.OK;
    }

    static Map<String, Object> read(Connection c, String schema) throws SQLException {
        String outbox = Identifiers.qualified(schema, "outbox_event");
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("schema", schema);
        try (Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT count(*), extract(epoch FROM now() - min(created_at)) FROM " + outbox
                    + " WHERE published_at IS NULL")) {
                rs.next();
                status.put("backlog", rs.getLong(1));
                double age = rs.getDouble(2);
                status.put("oldestUnpublishedAgeSeconds", rs.wasNull() ? null : Math.round(age * 1000) / 1000.0);
            }
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM " + Identifiers.qualified(schema, "outbox_dead_letter"))) {
                rs.next();
                status.put("deadLetters", rs.getLong(1));
            }
            List<Map<String, Object>> leases = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT lease_key, holder, fence, expires_at > now() AS valid, "
                    + "extract(epoch FROM expires_at - now()) FROM " + Identifiers.qualified(schema, "outbox_relay_lease")
                    + " ORDER BY lease_key")) {
                while (rs.next()) {
                    Map<String, Object> l = new LinkedHashMap<>();
                    l.put("lease", rs.getString(1));
                    l.put("holder", rs.getString(2));
                    l.put("fence", rs.getLong(3));
                    l.put("valid", rs.getBoolean(4));
                    l.put("expiresInSeconds", Math.round(rs.getDouble(5) * 10) / 10.0);
                    leases.add(l);
                }
            }
            status.put("leases", leases);
        }
        List<Map<String, Object>> slots = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT slot_name, active, wal_status,
                       pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint AS lag_bytes
                  FROM pg_replication_slots
                 WHERE database = current_database() AND slot_type = 'logical'
                 ORDER BY slot_name
                """); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Map<String, Object> slot = new LinkedHashMap<>();
                slot.put("slot", rs.getString(1));
                slot.put("active", rs.getBoolean(2));
                slot.put("walStatus", rs.getString(3));
                long lag = rs.getLong(4);
                slot.put("lagBytes", rs.wasNull() ? null : lag);
                slots.add(slot);
            }
        }
        status.put("replicationSlots", slots);
        return status;
    }

    @SuppressWarnings("unchecked")
    private static void print(PrintWriter out, Map<String, Object> status) {
        out.printf("schema                        %s%n", status.get("schema"));
        out.printf("backlog (unpublished events)  %s%n", status.get("backlog"));
        Object age = status.get("oldestUnpublishedAgeSeconds");
        out.printf("oldest unpublished            %s%n", age == null ? "-" : age + " s ago");
        out.printf("dead letters                  %s%n", status.get("deadLetters"));
        List<Map<String, Object>> leases = (List<Map<String, Object>>) status.get("leases");
        out.printf("leases                        %d%n", leases.size());
        Map<String, Integer> byHolder = new LinkedHashMap<>();
        for (Map<String, Object> l : leases) {
            if (Boolean.TRUE.equals(l.get("valid"))) {
                byHolder.merge((String) l.get("holder"), 1, Integer::sum);
            }
        }
        byHolder.forEach((holder, n) -> out.printf("  %-40s %d lease%s%n", holder, n, n == 1 ? "" : "s"));
        long expired = leases.stream().filter(l -> !Boolean.TRUE.equals(l.get("valid"))).count();
        if (expired > 0) {
            out.printf("  %-40s %d%n", "(expired, free to take)", expired);
        }
        List<Map<String, Object>> slots = (List<Map<String, Object>>) status.get("replicationSlots");
        out.printf("replication slots             %d%n", slots.size());
        for (Map<String, Object> s : slots) {
            out.printf("  %-28s active=%s wal_status=%s lag=%s bytes%n", s.get("slot"), s.get("active"), s.get("walStatus"), s.get("lagBytes"));
        }
    }
}
