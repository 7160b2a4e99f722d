package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.lang.reflect.Proxy;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsResult;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What the relay says about its topics' replicas, from Admin answers the test gives (an Admin that answers only
 * describeTopics and describeConfigs). Against real brokers: reliability's MinInsyncReplicasTest.
 */
class TopicReplicationTest {

    private static final Node B1 = new Node(1, "h", 1);
    private static final Node B2 = new Node(2, "h", 2);
    private static final Node B3 = new Node(3, "h", 3);

    private final Map<String, TopicDescription> topics = new HashMap<>();
    /** min.insync.replicas per topic; a topic missing here is refused (no DESCRIBE_CONFIGS). */
    private final Map<String, String> minIsr = new HashMap<>();
    private final TopicReplication replication = new TopicReplication("poll relay r1", Map.of(
            "bootstrap.servers", "b1:9092,b2:9092", "security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512",
            "sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"outbox-relay\" "
                    + "password=\"secret\";"), 1_000);
    private final ListAppender<ILoggingEvent> log = new ListAppender<>();
    private Logger logger;

    @BeforeEach
    void capture() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        logger = context.getLogger(TopicReplication.class);
        log.setContext(context);
        log.start();
        logger.addAppender(log);
    }

    @AfterEach
    void release() {
        logger.detachAppender(log);
    }

    private void topic(String name, int replicas, int inSync, boolean leader) {
        List<Node> all = List.of(B1, B2, B3).subList(0, replicas);
        topics.put(name, new TopicDescription(name, false, List.of(
                new TopicPartitionInfo(0, leader ? B1 : null, all, all.subList(0, inSync)),
                new TopicPartitionInfo(1, B2, all, all))));
    }

    private List<String> lines(Level level) {
        return log.list.stream().filter(e -> e.getLevel() == level).map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void aTemplatesPlaceholdersMatchOneOrMoreCharactersAndTheRestLiterally() {
        assertThat(TopicReplication.pattern("outbox.event.${aggregateType}").matcher("outbox.event.order").matches()).isTrue();
        assertThat(TopicReplication.pattern("outbox.event.${aggregateType}").matcher("outboxXevent.order").matches()).isFalse();
        assertThat(TopicReplication.pattern("outbox.event.${aggregateType}").matcher("outbox.event.").matches()).isFalse();
        assertThat(TopicReplication.pattern("${aggregateType}.${eventType}.v1").matcher("order.Placed.v1").matches()).isTrue();
        assertThat(TopicReplication.pattern("orders").matcher("orders").matches()).isTrue();
        assertThat(TopicReplication.pattern("orders").matcher("orders2").matches()).isFalse();
    }

    @Test
    void replicationFactorOneAndMinInsyncReplicasOneAreWarnedOncePerTopicOnSeveralBrokersOnly() {
        topic("rf1", 1, 1, true);
        topic("isr1", 3, 3, true);
        topic("ok", 3, 3, true);
        minIsr.putAll(Map.of("rf1", "1", "isr1", "1", "ok", "2"));
        replication.checkDurability(admin(), 1, List.of("rf1", "isr1", "ok"));
        assertThat(log.list).as("one broker: a development cluster, nothing to say").isEmpty();

        replication.checkDurability(admin(), 3, List.of("rf1", "isr1", "ok"));
        replication.checkDurability(admin(), 3, List.of("rf1", "isr1", "ok"));
        assertThat(lines(Level.WARN)).hasSize(2);
        assertThat(lines(Level.WARN).get(0) + lines(Level.WARN).get(1))
                .contains("topic rf1 has replication factor 1 on a cluster of 3 brokers",
                        "kafka-topics --bootstrap-server b1:9092 --create --topic rf1 --replication-factor 3",
                        "topic isr1 has min.insync.replicas=1 (replication factor 3)",
                        "kafka-configs --bootstrap-server b1:9092 --alter --entity-type topics --entity-name isr1 "
                                + "--add-config min.insync.replicas=2");
        assertThat(replication.checked("ok")).isTrue();
    }

    @Test
    void withoutDescribeConfigsItSaysOnceAtInfoWhichAclWouldAllowItAndStillWarnsAboutOneReplica() {
        topic("rf1", 1, 1, true);
        topic("a", 3, 3, true);
        topic("b", 3, 3, true);
        replication.checkDurability(admin(), 3, List.of("rf1", "a"));
        replication.checkDurability(admin(), 3, List.of("b"));
        assertThat(lines(Level.INFO)).singleElement().asString()
                .contains("could not read min.insync.replicas", "User:outbox-relay may not DESCRIBE_CONFIGS",
                        "kafka-acls --bootstrap-server b1:9092", "--allow-principal User:outbox-relay --operation DescribeConfigs")
                .doesNotContain("secret");
        assertThat(lines(Level.WARN)).singleElement().asString().contains("topic rf1 has replication factor 1");
        assertThat(replication.checked("b")).as("checked as far as it can be").isTrue();
    }

    @Test
    void theDiagnosisNamesPartitionsWithoutALeaderOrBelowMinInsyncReplicasAndNothingWhenAllIsWell() {
        topic("t", 3, 1, true);
        minIsr.put("t", "2");
        assertThat(replication.diagnose(admin(), List.of("t")))
                .isEqualTo("Kafka reports topic t partition 0 with 1 in-sync replica of 3, below min.insync.replicas=2");
        topic("t", 3, 3, false);
        assertThat(replication.diagnose(admin(), List.of("t"))).isEqualTo("Kafka reports topic t partition 0 without a leader");
        topic("t", 3, 3, true);
        assertThat(replication.diagnose(admin(), List.of("t"))).isNull();
    }

    /** An Admin that answers describeTopics and describeConfigs from the maps above; anything else is a test error. */
    private Admin admin() {
        return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
            switch (method.getName()) {
                case "describeTopics" -> {
                    Map<String, KafkaFuture<TopicDescription>> byName = new HashMap<>();
                    for (Object name : (Collection<?>) args[0]) {
                        byName.put((String) name, KafkaFuture.completedFuture(topics.get(name)));
                    }
                    return new DescribeTopicsResult(null, byName) { };
                }
                case "describeConfigs" -> {
                    Map<ConfigResource, KafkaFuture<Config>> futures = new HashMap<>();
                    for (Object r : (Collection<?>) args[0]) {
                        ConfigResource resource = (ConfigResource) r;
                        String value = minIsr.get(resource.name());
                        if (value == null) {
                            org.apache.kafka.common.internals.KafkaFutureImpl<Config> refused =
                                    new org.apache.kafka.common.internals.KafkaFutureImpl<>();
                            refused.completeExceptionally(new TopicAuthorizationException("Topic authorization failed."));
                            futures.put(resource, refused);
                        } else {
                            futures.put(resource, KafkaFuture.completedFuture(
                                    new Config(List.of(new ConfigEntry("min.insync.replicas", value)))));
                        }
                    }
                    return new DescribeConfigsResult(futures) { };
                }
                case "close" -> {
                    return null;
                }
                default -> throw new UnsupportedOperationException(method.getName());
            }
        });
    }
}
