package dev.outboxkit.benchmarks.peer.namastack;

import io.namastack.outbox.partition.PartitionCoordinator;
import io.namastack.outbox.partition.PartitionHasher;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The running peer as the benchmark JVM drives it. The benchmarks load this module in a class loader of its own
 * and call these methods reflectively, so every parameter and result is a JDK type. Not API.
 */
public final class Peer implements AutoCloseable {

    private final ConfigurableApplicationContext context;
    private final TransferService transfers;

    private Peer(ConfigurableApplicationContext context) {
        this.context = context;
        this.transfers = context.getBean(TransferService.class);
    }

    /**
     * Starts the application with {@code properties} on top of {@code application.properties}: at least
     * {@code spring.datasource.url}, {@code .username}, {@code .password}, {@code spring.kafka.bootstrap-servers}
     * and {@code peer.topic}.
     */
    public static Peer start(Map<String, String> properties) {
        SpringApplicationBuilder builder = new SpringApplicationBuilder(PeerApplication.class);
        properties.forEach((key, value) -> builder.properties(key + "=" + value));
        return new Peer(builder.run());
    }

    /**
     * Waits until this instance owns every one of namastack-outbox's partitions (a lone instance claims them at
     * start-up), so that a measurement starts with the peer polling all of its table.
     */
    public void awaitReady(long timeoutMillis) throws InterruptedException {
        PartitionCoordinator partitions = context.getBean(PartitionCoordinator.class);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        int owned;
        while ((owned = partitions.getAssignedPartitionNumbers().size()) < PartitionHasher.TOTAL_PARTITIONS) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the namastack-outbox peer owns " + owned + " of "
                        + PartitionHasher.TOTAL_PARTITIONS + " partitions after " + timeoutMillis + " ms: another"
                        + " instance registered in outbox_instance still holds the rest");
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    /** One transaction that schedules one record. */
    public void publish(String id, String aggregateId, long n, String payload) {
        transfers.publish(new TransferMade(id, aggregateId, n, payload));
    }

    /** One transaction scheduling a record per element (the arrays have one length). */
    public void publishAll(String[] ids, String[] aggregateIds, long[] ns, String[] payloads) {
        List<TransferMade> events = new ArrayList<>(ids.length);
        for (int i = 0; i < ids.length; i++) {
            events.add(new TransferMade(ids[i], aggregateIds[i], ns[i], payloads[i]));
        }
        transfers.publishAll(events);
    }

    /** One transfer of {@code amount} between two accounts; with a record when {@code id} is not null. */
    public void transfer(int from, int to, long amount, String id, String aggregateId, long n, String payload) {
        transfers.transfer(from, to, amount, id == null ? null : new TransferMade(id, aggregateId, n, payload));
    }

    /** One transaction with a {@code crash_committed} row and its record. */
    public void publishRecorded(String id, String aggregateId, long n, String payload) {
        transfers.publishRecorded(new TransferMade(id, aggregateId, n, payload));
    }

    @Override
    public void close() {
        context.close();
    }

    /** The peer alone in a JVM: {@code key=value} properties as arguments; prints READY. */
    public static void main(String[] args) {
        Map<String, String> properties = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            properties.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        start(properties);
        System.out.println("READY");
    }
}
