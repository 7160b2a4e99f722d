package dev.outboxkit.runtime;

import dev.outboxkit.core.TopicRoute;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.AuthorizationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: shared by both relays, through {@link KafkaReachability}'s probe thread (never on a publishing path,
 * never inside {@code health()}).
 *
 * <p>What the relay's topics' replicas say, read with the Admin client:
 * <ul>
 *   <li><b>Durability at start</b> ({@link #checkDurability}): on a cluster of more than one broker, a topic with
 *       replication factor 1, or with {@code min.insync.replicas=1} (the relays always write with {@code acks=all}),
 *       can lose an event Kafka acknowledged, with the one broker that held it. Said once per topic at WARN, with the
 *       command that fixes it. Checked for the topics the route can produce that exist at start, and for each topic
 *       the first time the relay writes to it. Reading {@code min.insync.replicas} takes DESCRIBE_CONFIGS on the
 *       topic, which the documented relay ACLs do not grant: without it the relay says once at INFO what it could not
 *       check and which ACL would allow it, and goes on.</li>
 *   <li><b>Why writes wait</b> ({@link #diagnose}): while Kafka acknowledges nothing, the partitions of the topics
 *       written to that have no leader or fewer in-sync replicas than {@code min.insync.replicas}, for the health
 *       detail.</li>
 * </ul>
 */
public final class TopicReplication {

    private static final Logger log = LoggerFactory.getLogger(TopicReplication.class);

    /** At most this many topics are described for a diagnosis: the detail is one line. */
    static final int DIAGNOSED_TOPICS = 10;

    private final String who;
    private final Map<String, Object> clientConfig;
    private final long timeoutMillis;
    private final Set<String> checked = ConcurrentHashMap.newKeySet();
    private volatile boolean configsRefused;

    /**
     * @param who           the client, for the log, e.g. {@code "poll relay relay-1"}
     * @param clientConfig  the client's settings (bootstrap servers and principal, named in the commands)
     * @param timeoutMillis how long one Admin call may wait
     */
    public TopicReplication(String who, Map<String, Object> clientConfig, long timeoutMillis) {
        this.who = who;
        this.clientConfig = clientConfig;
        this.timeoutMillis = timeoutMillis;
    }

    /** Whether {@code topic}'s durability was checked (a verdict, or nothing to say). */
    public boolean checked(String topic) {
        return checked.contains(topic);
    }

    /** The existing topics {@code route}'s template can produce (all of them when it names one topic), sorted. */
    public List<String> routeTopics(Admin admin, TopicRoute route) throws ExecutionException, InterruptedException,
            java.util.concurrent.TimeoutException {
        Pattern pattern = pattern(route.template());
        Set<String> names = admin.listTopics().names().get(timeoutMillis, TimeUnit.MILLISECONDS);
        return names.stream().filter(n -> pattern.matcher(n).matches()).sorted().toList();
    }

    /** The topic names a template can produce: each placeholder stands for one or more characters. */
    static Pattern pattern(String template) {
        StringBuilder regex = new StringBuilder();
        int at = 0;
        while (at < template.length()) {
            int open = template.indexOf("${", at);
            int close = open < 0 ? -1 : template.indexOf('}', open);
            if (open < 0 || close < 0) {
                regex.append(Pattern.quote(template.substring(at)));
                break;
            }
            if (open > at) {
                regex.append(Pattern.quote(template.substring(at, open)));
            }
            regex.append(".+");
            at = close + 1;
        }
        return Pattern.compile(regex.toString());
    }

    /**
     * WARNs once per topic of {@code topics} whose replication factor or {@code min.insync.replicas} is 1 when the
     * cluster has {@code brokers} > 1; topics already checked are skipped. Any failure to read is logged (INFO once
     * for a missing DESCRIBE_CONFIGS, DEBUG otherwise) and the topics are checked again next time.
     */
    public void checkDurability(Admin admin, int brokers, Collection<String> topics) {
        if (brokers <= 1) {
            return; // one broker: replication factor 1 is all there is, and a development cluster
        }
        List<String> todo = topics.stream().filter(t -> !checked.contains(t)).distinct().toList();
        if (todo.isEmpty()) {
            return;
        }
        Map<String, TopicDescription> described;
        try {
            described = admin.describeTopics(todo).allTopicNames().get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (ExecutionException | java.util.concurrent.TimeoutException | RuntimeException e) {
            log.debug("{}: could not describe topics {} to check their replication ({}); trying again later", who, todo,
                    e.toString());
            return;
        }
        Map<String, Integer> minIsr = minInsyncReplicas(admin, described.keySet(), true);
        for (TopicDescription d : described.values()) {
            int rf = replicationFactor(d);
            Integer min = minIsr.get(d.name());
            if (min == null && !configsRefused) {
                continue; // not read this time (a timeout): checked again later
            }
            checked.add(d.name());
            if (rf == 1) {
                log.warn("{}: topic {} has replication factor 1 on a cluster of {} brokers: an event acknowledged by its "
                                + "one broker can be lost with it. Give it 3 replicas: move its partitions with "
                                + "kafka-reassign-partitions (a plan that lists three brokers per partition), or recreate it "
                                + "with kafka-topics --bootstrap-server {} --create --topic {} --replication-factor 3 "
                                + "--config min.insync.replicas=2", who, d.name(), brokers, servers(), d.name());
            } else if (min != null && min <= 1) {
                log.warn("{}: topic {} has min.insync.replicas={} (replication factor {}) on a cluster of {} brokers: the "
                                + "relay writes with acks=all, but an event acknowledged by one broker (the others out of "
                                + "sync) can be lost with it. Raise it: kafka-configs --bootstrap-server {} --alter "
                                + "--entity-type topics --entity-name {} --add-config min.insync.replicas=2 (or set "
                                + "min.insync.replicas=2 cluster-wide, on the controllers in KRaft)", who, d.name(), min, rf,
                        brokers, servers(), d.name());
            }
        }
    }

    /**
     * Why writes to {@code topics} may wait, in one line, or null when it cannot be read or shows nothing wrong:
     * partitions without a leader, and partitions with fewer in-sync replicas than {@code min.insync.replicas}
     * (acks=all writes to them are refused).
     */
    public String diagnose(Admin admin, Collection<String> topics) {
        List<String> some = topics.stream().sorted().limit(DIAGNOSED_TOPICS).toList();
        if (some.isEmpty()) {
            return null;
        }
        Map<String, TopicDescription> described;
        try {
            described = admin.describeTopics(some).allTopicNames().get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException | java.util.concurrent.TimeoutException | RuntimeException e) {
            return null;
        }
        Map<String, Integer> minIsr = minInsyncReplicas(admin, described.keySet(), false);
        List<String> findings = new ArrayList<>();
        for (TopicDescription d : new TreeSet<>(described.keySet()).stream().map(described::get).toList()) {
            Integer min = minIsr.get(d.name());
            List<Integer> leaderless = new ArrayList<>();
            Map<Integer, List<Integer>> shortOfIsr = new LinkedHashMap<>(); // in-sync count -> partitions
            for (TopicPartitionInfo p : d.partitions()) {
                if (p.leader() == null || p.leader().isEmpty()) {
                    leaderless.add(p.partition());
                } else if (min != null && p.isr().size() < min) {
                    shortOfIsr.computeIfAbsent(p.isr().size(), n -> new ArrayList<>()).add(p.partition());
                }
            }
            if (!leaderless.isEmpty()) {
                findings.add("topic " + d.name() + " partition" + plural(leaderless) + " " + join(leaderless)
                        + " without a leader");
            }
            shortOfIsr.forEach((isr, partitions) -> findings.add("topic " + d.name() + " partition" + plural(partitions)
                    + " " + join(partitions) + " with " + isr + " in-sync replica" + (isr == 1 ? "" : "s") + " of "
                    + replicationFactor(d) + ", below min.insync.replicas=" + min));
        }
        return findings.isEmpty() ? null : "Kafka reports " + String.join("; ", findings);
    }

    /** min.insync.replicas per topic (the value in effect, wherever set); empty when it cannot be read. */
    private Map<String, Integer> minInsyncReplicas(Admin admin, Collection<String> topics, boolean sayIfRefused) {
        List<ConfigResource> resources = topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        Map<String, Integer> out = new HashMap<>();
        Map<ConfigResource, KafkaFuture<Config>> futures = admin.describeConfigs(resources).values();
        List<String> refused = new ArrayList<>();
        for (Map.Entry<ConfigResource, KafkaFuture<Config>> e : futures.entrySet()) {
            try {
                Config config = e.getValue().get(timeoutMillis, TimeUnit.MILLISECONDS);
                ConfigEntry entry = config.get(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
                if (entry != null && entry.value() != null) {
                    out.put(e.getKey().name(), Integer.parseInt(entry.value().trim()));
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return out;
            } catch (ExecutionException ee) {
                if (ee.getCause() instanceof AuthorizationException) {
                    refused.add(e.getKey().name());
                }
            } catch (java.util.concurrent.TimeoutException | RuntimeException re) {
                // not read this time
            }
        }
        if (!refused.isEmpty() && sayIfRefused && !configsRefused) {
            configsRefused = true;
            log.info("{}: could not read min.insync.replicas of topic{} {} to check that an acknowledged event survives "
                            + "a broker's loss: {} may not DESCRIBE_CONFIGS {}. The relay works without it; to have it "
                            + "checked at start, grant: kafka-acls --bootstrap-server {} --command-config admin.properties "
                            + "--add --allow-principal {} --operation DescribeConfigs --topic {} (or with "
                            + "--resource-pattern-type prefixed, the route's prefix)", who, refused.size() == 1 ? "" : "s",
                    refused, OperatorActions.principal(clientConfig), refused.size() == 1 ? "it" : "them", servers(),
                    OperatorActions.principal(clientConfig), refused.get(0));
        } else if (!refused.isEmpty()) {
            configsRefused = true;
        }
        return out;
    }

    private static int replicationFactor(TopicDescription d) {
        return d.partitions().stream().mapToInt(p -> p.replicas().size()).min().orElse(0);
    }

    private String servers() {
        Object s = clientConfig.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        return s == null ? "<bootstrap servers>" : String.valueOf(s).split(",")[0].trim();
    }

    private static String plural(List<Integer> partitions) {
        return partitions.size() == 1 ? "" : "s";
    }

    private static String join(List<Integer> partitions) {
        return String.join(", ", partitions.stream().map(String::valueOf).toList());
    }
}
