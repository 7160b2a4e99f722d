package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.OutboxEvent;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The events every benchmark writes: transfers on {@value #ACCOUNTS} accounts, payloads of a
 * fixed size in exactly the form PostgreSQL renders the jsonb ({@code {"n": 7, "pad": "…"}}),
 * so a record built here is the record a relay builds from the row. The padding is random
 * letters and digits: Kafka's lz4 compresses it about as much as real JSON, not to nothing.
 */
public final class SyntheticEvents {

    public static final String AGGREGATE_TYPE = "account";
    public static final String EVENT_TYPE = "TransferMade";
    public static final int ACCOUNTS = 10_000;
    private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".toCharArray();

    private SyntheticEvents() {
    }

    /** A jsonb payload of exactly {@code bytes} bytes as PostgreSQL renders it (at least the bare object). */
    public static String payload(long n, int bytes) {
        String head = "{\"n\": " + n + ", \"pad\": \"";
        int pad = Math.max(0, bytes - head.length() - 2);
        StringBuilder sb = new StringBuilder(head.length() + pad + 2).append(head);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < pad; i++) {
            sb.append(ALPHABET[random.nextInt(ALPHABET.length)]);
        }
        return sb.append("\"}").toString();
    }

    /** The aggregate of event {@code n}: spread over {@value #ACCOUNTS} accounts. */
    public static String aggregateId(long n) {
        return "acc-" + (n % ACCOUNTS);
    }

    /** Event {@code n} as a relay would read it back: default topic route, no extra headers. */
    public static OutboxEvent event(long n, int payloadBytes) {
        return event(EventIds.next(), n, payloadBytes, Instant.now());
    }

    public static OutboxEvent event(UUID id, long n, int payloadBytes, Instant createdAt) {
        return new OutboxEvent(id, AGGREGATE_TYPE, aggregateId(n), EVENT_TYPE, null, payload(n, payloadBytes),
                Map.of(), createdAt);
    }
}
