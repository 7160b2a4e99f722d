package dev.outboxkit.consumer;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A consumer in a child JVM that stops dead between the database commit and the offset commit:
 * after its N-th database commit it prints {@value #MARKER} and blocks the poll thread, so the
 * offsets of that batch are never committed, until the test kills it with SIGKILL.
 *
 * <p>Arguments: bootstrap servers, JDBC URL, user, password, topic, group, N.
 */
public final class CrashingConsumerMain {

    static final String MARKER = "CRASH-POINT: database committed, offsets not committed";

    private CrashingConsumerMain() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(args[1]);
        ds.setUser(args[2]);
        ds.setPassword(args[3]);
        String topic = args[4];
        String group = args[5];
        int crashAfter = Integer.parseInt(args[6]);
        AtomicInteger commits = new AtomicInteger();
        DedupeConsumer consumer = DedupeConsumer.builder()
                .bootstrapServers(bootstrap)
                .kafkaProperties(Map.of("max.poll.records", "25", "session.timeout.ms", "6000",
                        "heartbeat.interval.ms", "1000"))
                .group(group)
                .topics(List.of(topic))
                .dataSource(ds)
                .batchHandler(Projection.batchHandler())
                .afterDatabaseCommit(() -> {
                    if (commits.incrementAndGet() == crashAfter) {
                        System.out.println(MARKER);
                        System.out.flush();
                        while (true) {
                            try {
                                Thread.sleep(60_000);
                            } catch (InterruptedException e) {
                                // keep the thread parked: only SIGKILL ends this process
                            }
                        }
                    }
                })
                .build();
        consumer.start();
        System.out.println("consumer started");
        Thread.currentThread().join();
    }
}
