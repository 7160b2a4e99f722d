package dev.outboxkit.spring.test;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.writer.OutboxWriter;
import dev.outboxkit.writer.WriteMode;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.util.ClassUtils;

/** What {@link AutoConfigureOutboxEvents} imports: {@link OutboxEvents} and its {@link Recorder}. */
@AutoConfiguration(afterName = "dev.outboxkit.spring.OutboxkitAutoConfiguration")
class OutboxEventsAutoConfiguration {

    @Bean
    OutboxEvents outboxkitOutboxEvents(ObjectProvider<OutboxWriter> writer, JdbcTemplate jdbc, Environment env,
                                       ApplicationContext context) {
        OutboxWriter w = writer.getIfAvailable();
        if (w == null) {
            throw new IllegalStateException("@AutoConfigureOutboxEvents records what outboxkit's writer writes, but the context "
                    + "has no OutboxWriter bean: is outbox-spring-boot-starter on the class path and a DataSource configured?");
        }
        if (w.mode() != WriteMode.KEEP) {
            throw new IllegalStateException("@AutoConfigureOutboxEvents reads each written event back from outbox_event, which "
                    + "the writer fills only in mode keep, not " + w.mode() + ": set outboxkit.writer.mode=keep in the test");
        }
        String template = env.getProperty("outboxkit.relay.options." + RelayOptions.ROUTE.kebabName());
        TopicRoute route = template == null ? RelayOptions.ROUTE.defaultValue() : RelayOptions.ROUTE.parse(template);
        return new OutboxEvents(jdbc, OutboxTables.in(w.schema()), route, () -> kafkaSettings(context, env));
    }

    @Bean
    Recorder outboxkitRecorder(OutboxEvents events, OutboxWriter writer) {
        return new Recorder(events, OutboxTables.in(writer.schema()));
    }

    /** The application's Spring Kafka consumer settings, or just spring.kafka.bootstrap-servers without Spring Kafka. */
    private static Map<String, Object> kafkaSettings(ApplicationContext context, Environment env) {
        if (ClassUtils.isPresent("org.springframework.kafka.core.ConsumerFactory", OutboxEvents.class.getClassLoader())) {
            Map<String, Object> settings = SpringKafkaSettings.of(context);
            if (settings != null) {
                return settings;
            }
        }
        return Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, env.getProperty("spring.kafka.bootstrap-servers", "localhost:9092"));
    }
}
