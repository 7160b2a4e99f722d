package dev.outboxkit.spring.test;

import java.util.Map;
import org.springframework.context.ApplicationContext;
import org.springframework.kafka.core.ConsumerFactory;

/** The only class that names Spring Kafka (optional): loaded when it is on the class path. */
final class SpringKafkaSettings {

    private SpringKafkaSettings() {
    }

    /** The consumer settings of the context's ConsumerFactory, or null when it has none. */
    static Map<String, Object> of(ApplicationContext context) {
        ConsumerFactory<?, ?> factory = context.getBeanProvider(ConsumerFactory.class).getIfUnique();
        return factory == null ? null : factory.getConfigurationProperties();
    }
}
