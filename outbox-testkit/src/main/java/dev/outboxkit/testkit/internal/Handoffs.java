package dev.outboxkit.testkit.internal;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Not API: the relays' handoff tests measure a handoff's gap as the worst delay (Kafka record timestamp minus the
 * event's {@code createdAt} header) of the events created while it happened: an event that had to wait for the
 * successor waited the whole gap.
 */
public final class Handoffs {

    /** One handoff: when the stop began and ended (epoch millis of this machine's clock). */
    public record Window(long fromMillis, long toMillis) {
    }

    private Handoffs() {
    }

    /** A record's delay in ms: its timestamp (the producer's send time) minus its event's createdAt. */
    public static long delayMillis(ConsumerRecord<byte[], byte[]> r) {
        Header h = r.headers().lastHeader("createdAt");
        if (h == null) {
            throw new IllegalArgumentException("record at " + r.topic() + "-" + r.partition() + "@" + r.offset()
                    + " has no createdAt header: not an outboxkit record");
        }
        return r.timestamp() - Instant.parse(new String(h.value(), StandardCharsets.UTF_8)).toEpochMilli();
    }

    /**
     * The worst delay of the events created from {@code slackMillis} before each window's start to
     * {@code slackMillis} after its end, one figure per window.
     */
    public static List<Long> worstDelays(Collection<ConsumerRecord<byte[], byte[]>> records, List<Window> windows,
                                         long slackMillis) {
        List<Long> out = new ArrayList<>();
        for (Window w : windows) {
            long worst = 0;
            for (ConsumerRecord<byte[], byte[]> r : records) {
                long created = r.timestamp() - delayMillis(r);
                if (created >= w.fromMillis() - slackMillis && created <= w.toMillis() + slackMillis) {
                    worst = Math.max(worst, delayMillis(r));
                }
            }
            out.add(worst);
        }
        return out;
    }

    /** "p50 x ms, max y ms" of {@code millis}. */
    public static String summary(List<Long> millis) {
        List<Long> sorted = new ArrayList<>(millis);
        sorted.sort(null);
        return "p50 " + sorted.get(sorted.size() / 2) + " ms, max " + sorted.get(sorted.size() - 1) + " ms (" + millis + ")";
    }
}
