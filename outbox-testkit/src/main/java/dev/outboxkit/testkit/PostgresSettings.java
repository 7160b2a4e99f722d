package dev.outboxkit.testkit;

import java.util.LinkedHashMap;
import java.util.Map;

/** Server settings every test server gets: logical decoding on, room for slots and senders. */
final class PostgresSettings {

    private PostgresSettings() {
    }

    /**
     * @param durable false for the test suite (fsync off: a crashed test machine loses nothing
     *                we need); true for benchmarks and the demo, so their numbers are honest
     */
    static Map<String, String> forTests(boolean durable) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("wal_level", "logical");
        s.put("max_replication_slots", "32");
        s.put("max_wal_senders", "32");
        s.put("max_connections", "300");
        s.put("shared_buffers", "256MB");
        s.put("max_wal_size", "2GB");
        s.put("wal_sender_timeout", "30s");
        s.put("listen_addresses", "127.0.0.1");
        if (durable) {
            // zonky starts PostgreSQL with -F and synchronous_commit=off; undo both for honest numbers.
            s.put("fsync", "on");
            s.put("synchronous_commit", "on");
            s.put("full_page_writes", "on");
        } else {
            s.put("fsync", "off");
            s.put("full_page_writes", "off");
        }
        return s;
    }
}
