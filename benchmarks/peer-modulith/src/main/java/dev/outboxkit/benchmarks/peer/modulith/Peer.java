package dev.outboxkit.benchmarks.peer.modulith;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.modulith.events.CompletedEventPublications;
import org.springframework.modulith.events.IncompleteEventPublications;
import org.springframework.modulith.events.core.EventSerializer;
import org.springframework.transaction.support.TransactionTemplate;

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

    /** One transaction that publishes one event. */
    public void publish(String id, String aggregateId, long n, String payload) {
        transfers.publish(new TransferMade(id, aggregateId, n, payload));
    }

    /** One transfer of {@code amount} between two accounts; with an event when {@code id} is not null. */
    public void transfer(int from, int to, long amount, String id, String aggregateId, long n, String payload) {
        transfers.transfer(from, to, amount, id == null ? null : new TransferMade(id, aggregateId, n, payload));
    }

    /** One transaction with a {@code crash_committed} row and its event. */
    public void publishRecorded(String id, String aggregateId, long n, String payload) {
        transfers.publishRecorded(new TransferMade(id, aggregateId, n, payload));
    }

    /**
     * The {@code listener_id}, {@code event_type}, {@code status} and {@code completion_attempts} the registry writes for a {@link TransferMade}: one event is
     * published in a transaction that reads its own registry row and is then rolled back (nothing is sent). A
     * benchmark uses them to pre-fill a backlog in the rows Spring Modulith itself writes.
     */
    public List<String> registryRow() {
        JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
        TransactionTemplate tx = context.getBean(TransactionTemplate.class);
        String probe = UUID.randomUUID().toString();
        return tx.execute(status -> {
            transfers.publish(new TransferMade(probe, "probe", -1, "{}"));
            List<String> row = jdbc.queryForObject("SELECT listener_id, event_type, status, completion_attempts::text"
                            + " FROM event_publication WHERE completion_date IS NULL ORDER BY publication_date DESC LIMIT 1",
                    (rs, i) -> Arrays.asList(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)));
            status.setRollbackOnly();
            return row;
        });
    }

    /** The {@code serialized_event} the registry stores for this event (its own {@link EventSerializer}). */
    public String serializedEvent(String id, String aggregateId, long n, String payload) {
        return context.getBean(EventSerializer.class).serialize(new TransferMade(id, aggregateId, n, payload)).toString();
    }

    /** Hands every incomplete publication to its listener again (the documented {@link IncompleteEventPublications}). */
    public void resubmitIncomplete() {
        context.getBean(IncompleteEventPublications.class).resubmitIncompletePublications(publication -> true);
    }

    /** Purges completed publications, as the documentation asks applications on the default completion mode to do. */
    public void purgeCompleted() {
        context.getBean(CompletedEventPublications.class).deletePublications(publication -> true);
    }

    @Override
    public void close() {
        context.close();
    }

    /** The peer alone in a JVM (the crash runs): {@code key=value} properties as arguments; prints READY. */
    public static void main(String[] args) {
        Map<String, String> properties = new java.util.LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            properties.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        start(properties);
        System.out.println("READY");
    }
}
