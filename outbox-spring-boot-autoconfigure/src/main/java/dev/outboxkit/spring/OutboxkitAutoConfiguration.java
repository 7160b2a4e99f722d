package dev.outboxkit.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.sql.Migrations;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.OutboxWriter;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Auto-configuration of outboxkit in a Spring Boot application (see the module README): the
 * writer in Spring transactions, idempotency keys for {@link Idempotent} Spring MVC endpoints,
 * the inbox for Spring Kafka listeners, and, with {@code outboxkit.relay.mode}, a relay with its
 * health indicator. Every bean backs off when the application defines its own.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(OutboxkitProperties.class)
public class OutboxkitAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(OutboxkitAutoConfiguration.class);

    /** Applies the schema before any outboxkit bean that needs it is created. Not API. */
    public static final class SchemaMigration {
        SchemaMigration(DataSource dataSource, String schema) {
            Migrations.Result result = Migrations.migrate(dataSource, schema);
            log.info("outboxkit schema in '{}' at version {} ({} migration(s) applied)", result.schema(), result.version(),
                    result.applied());
        }
    }

    @Bean
    @ConditionalOnBooleanProperty("outboxkit.migration.enabled")
    @ConditionalOnMissingBean
    SchemaMigration outboxkitSchemaMigration(DataSource dataSource, OutboxkitProperties properties) {
        return new SchemaMigration(dataSource, properties.getSchema());
    }

    @Bean
    @ConditionalOnMissingBean
    OutboxWriter outboxWriter(OutboxkitProperties properties, ObjectProvider<MeterRegistry> meterRegistry,
                              ObjectProvider<ObjectMapper> objectMapper, ObjectProvider<SchemaMigration> migration) {
        migration.ifAvailable(m -> { });
        OutboxkitProperties.Writer w = properties.getWriter();
        OutboxWriter.Builder b = OutboxWriter.builder().schema(properties.getSchema()).mode(w.getMode())
                .maxPayloadBytes(w.getMaxPayloadBytes()).notifyChannel(w.getNotifyChannel());
        meterRegistry.ifUnique(b::meterRegistry);
        objectMapper.ifUnique(b::objectMapper);
        return b.build();
    }

    @Bean
    @ConditionalOnMissingBean
    SpringOutboxWriter springOutboxWriter(OutboxWriter writer, DataSource dataSource) {
        return new SpringOutboxWriter(writer, dataSource);
    }

    @Bean
    @ConditionalOnMissingBean
    IdempotencyKeys idempotencyKeys(OutboxkitProperties properties, OutboxWriter writer,
                                    ObjectProvider<MeterRegistry> meterRegistry) {
        OutboxkitProperties.Idempotency i = properties.getIdempotency();
        IdempotencyKeys.Builder b = IdempotencyKeys.builder().schema(properties.getSchema()).lease(i.getLease())
                .retention(i.getRetention()).writer(writer);
        meterRegistry.ifUnique(b::meterRegistry);
        return b.build();
    }

    /** Idempotency keys for Spring MVC. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(RequestMappingHandlerMapping.class)
    @ConditionalOnBooleanProperty(name = "outboxkit.idempotency.enabled", matchIfMissing = true)
    static class Web {

        @Bean
        @ConditionalOnBean(PlatformTransactionManager.class)
        FilterRegistrationBean<IdempotencyFilter> outboxkitIdempotencyFilter(
                IdempotencyKeys keys, DataSource dataSource, PlatformTransactionManager transactionManager,
                @Qualifier("requestMappingHandlerMapping") ObjectProvider<RequestMappingHandlerMapping> mapping,
                OutboxkitProperties properties) {
            IdempotencyFilter filter = new IdempotencyFilter(keys, dataSource, transactionManager, mapping::getIfAvailable,
                    properties.getIdempotency());
            FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
            registration.setName("outboxkitIdempotencyFilter");
            registration.setOrder(properties.getIdempotency().getFilterOrder());
            return registration;
        }
    }

    /** The inbox for Spring Kafka listeners. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"dev.outboxkit.consumer.Inbox", "org.springframework.kafka.support.KafkaUtils"})
    static class Consumer {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(PlatformTransactionManager.class)
        SpringInbox springInbox(DataSource dataSource, PlatformTransactionManager transactionManager,
                                OutboxkitProperties properties) {
            return new SpringInbox(dataSource, transactionManager, properties.getSchema(), properties.getConsumer().getGroup());
        }
    }

    /** A relay inside the application, for {@code outboxkit.relay.mode=poll|cdc}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnExpression("'${outboxkit.relay.mode:none}'.trim().toLowerCase() != 'none'")
    static class Relays {

        @Bean
        @ConditionalOnMissingBean
        RelayLifecycle outboxkitRelay(OutboxkitProperties properties, Environment env,
                                      ObjectProvider<MeterRegistry> meterRegistry, ObjectProvider<SchemaMigration> migration) {
            migration.ifAvailable(m -> { });
            RelaySettings settings = new RelaySettings(properties, env, registry(meterRegistry));
            return switch (properties.getRelay().getMode()) {
                case POLL -> {
                    requireClass("dev.outboxkit.relay.poller.PollingRelay", "poll", "relay-poller");
                    yield new RelayLifecycle(PollRelays.build(settings));
                }
                case CDC -> {
                    requireClass("dev.outboxkit.relay.cdc.CdcRelay", "cdc", "relay-debezium");
                    yield new RelayLifecycle(CdcRelays.build(settings));
                }
                case NONE -> throw new IllegalStateException("unreachable: outboxkit.relay.mode=none starts no relay");
            };
        }

        /** The relay's readiness for Actuator. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        static class Health {

            @Bean
            @ConditionalOnMissingBean(name = "outboxRelayHealthIndicator")
            RelayHealthIndicator outboxRelayHealthIndicator(RelayLifecycle relay) {
                return new RelayHealthIndicator(relay);
            }
        }
    }

    private static void requireClass(String className, String mode, String artifact) {
        try {
            Class.forName(className, false, OutboxkitAutoConfiguration.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("outboxkit.relay.mode=" + mode + " needs the relay on the classpath: add the "
                    + "dependency dev.outboxkit:" + artifact, e);
        }
    }

    private static MeterRegistry registry(ObjectProvider<MeterRegistry> provider) {
        MeterRegistry registry = provider.getIfUnique();
        return registry != null ? registry : new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    }
}
