package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.TestKafka;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;

/**
 * Creating a topic and waiting until every partition has a leader. On a loaded machine a producer
 * that sends into a topic created a moment ago meets {@code NOT_LEADER_OR_FOLLOWER} and, being
 * idempotent, can wedge on out-of-order sequence numbers; waiting for the leaders first avoids it.
 */
public final class KafkaTopics {

    private KafkaTopics() {
    }

    /** Creates {@code topic} with {@code partitions} partitions and returns once each has a leader (60 s at most). */
    public static void createReady(TestKafka kafka, String topic, int partitions) throws Exception {
        kafka.createTopic(topic, partitions);
        try (Admin admin = kafka.admin()) {
            Await.until("leaders of topic " + topic, () -> allLed(admin, topic, partitions), Duration.ofSeconds(60), 50,
                    () -> null);
        }
    }

    private static boolean allLed(Admin admin, String topic, int partitions) {
        try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            return d.partitions().size() == partitions
                    && d.partitions().stream().allMatch(p -> p.leader() != null && p.leader().id() >= 0);
        } catch (Exception e) {
            return false; // not known yet: ask again
        }
    }
}
