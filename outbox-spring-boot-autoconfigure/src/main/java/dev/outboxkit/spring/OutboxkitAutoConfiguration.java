package dev.outboxkit.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.consumer.LateArrivalException;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.spring.spi.WriteObserver;
import dev.outboxkit.sql.Migrations;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.OutboxWriter;
import dev.outboxkit.writer.PayloadSerializer;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerConfig;
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
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDependsOnDatabaseInitializationDetector;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.support.ExponentialBackOffWithMaxRetries;
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
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration",
        "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration"})
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(OutboxkitProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
public class OutboxkitAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(OutboxkitAutoConfiguration.class);

    /**
     * Applies the schema ({@code outboxkit.migration.enabled=true}) at start-up: a database
     * initializer in Spring Boot's sense, so it runs before the application's Flyway or Liquibase,
     * JPA and JdbcTemplate users, and outboxkit's own beans. Not API.
     */
    public static final class SchemaMigration {
        SchemaMigration(DataSource dataSource, String schema) {
            Migrations.Result result = Migrations.migrate(dataSource, schema);
            log.info("outboxkit schema in '{}' at version {} ({} migration(s) applied)", result.schema(), result.version(),
                    result.applied());
        }
    }

    /**
     * With {@code outboxkit.migration.enabled=false}: checks at start-up, after the application's
     * own database initialization (Flyway, Liquibase, SQL scripts), that the outboxkit tables are
     * there, so a missing schema fails start-up with the fix instead of failing the first write.
     * A database that cannot be reached now is only logged (the pool may reach it later). Not API.
     */
    public static final class SchemaCheck {
        SchemaCheck(DataSource dataSource, String schema) {
            String table = Identifiers.qualified(schema, OutboxTables.OUTBOX_EVENT);
            boolean present;
            String where;
            // to_regclass needs no privilege on the table: a consumer's role without grants on outbox_event passes.
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)")) {
                ps.setString(1, table);
                try (ResultSet rs = ps.executeQuery()) {
                    present = rs.next() && rs.getString(1) != null;
                }
                where = c.getMetaData().getURL();
            } catch (SQLException e) {
                log.warn("outboxkit could not check for its tables in schema '{}' at start-up: {}", schema, e.getMessage());
                return;
            }
            if (!present) {
                throw new IllegalStateException("outboxkit: table " + table + " does not exist in " + where
                        + ": the outboxkit schema is not applied to schema '" + schema + "'. Set outboxkit.migration.enabled=true "
                        + "to apply it at start-up, apply it beforehand with 'outbox migrate', or set outboxkit.schema to the "
                        + "schema that has it");
            }
        }
    }

    @Bean
    @ConditionalOnBooleanProperty("outboxkit.migration.enabled")
    @ConditionalOnMissingBean
    SchemaMigration outboxkitSchemaMigration(DataSource dataSource, OutboxkitProperties properties) {
        return new SchemaMigration(dataSource, properties.getSchema());
    }

    @Bean
    @ConditionalOnBooleanProperty(name = "outboxkit.migration.enabled", havingValue = false, matchIfMissing = true)
    @ConditionalOnMissingBean
    SchemaCheck outboxkitSchemaCheck(DataSource dataSource, OutboxkitProperties properties) {
        return new SchemaCheck(dataSource, properties.getSchema());
    }

    /** {@link SchemaMigration} is a database initializer, ahead of Flyway's and Liquibase's. Not API. */
    public static final class SchemaMigrationDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {
        @Override
        protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
            return Set.of(SchemaMigration.class);
        }

        @Override
        public int getOrder() {
            return -10;
        }
    }

    /** outboxkit's beans wait for every database initializer (outboxkit's, Flyway, Liquibase, scripts). Not API. */
    public static final class DependsOnSchemaDetector extends AbstractBeansOfTypeDependsOnDatabaseInitializationDetector {
        @Override
        protected Set<Class<?>> getDependsOnDatabaseInitializationBeanTypes() {
            return Set.of(SchemaCheck.class, OutboxWriter.class, IdempotencyKeys.class, RelayLifecycle.class,
                    SpringOutboxWriter.class);
        }
    }

    /**
     * Payloads are written with the application's JSON mapper, in this order: a {@link PayloadSerializer} bean of its
     * own, Boot 4's Jackson 3 {@code JsonMapper} ({@link Jackson3Payloads}), a Jackson 2 {@code ObjectMapper} bean, else
     * the writer's plain Jackson 2 default.
     */
    @Bean
    @ConditionalOnMissingBean
    OutboxWriter outboxWriter(OutboxkitProperties properties, ObjectProvider<MeterRegistry> meterRegistry,
                              ObjectProvider<PayloadSerializer> serializer, ObjectProvider<ObjectMapper> objectMapper) {
        OutboxkitProperties.Writer w = properties.getWriter();
        OutboxWriter.Builder b = OutboxWriter.builder().schema(properties.getSchema()).mode(w.getMode())
                .maxPayloadBytes(w.getMaxPayloadBytes()).notifyChannel(w.getNotifyChannel());
        meterRegistry.ifUnique(b::meterRegistry);
        PayloadSerializer own = serializer.getIfUnique();
        if (own != null) {
            b.payloadSerializer(own);
        } else {
            objectMapper.ifUnique(b::objectMapper);
        }
        return b.build();
    }

    /** Boot 4's JSON mapper (Jackson 3), with the application's modules and spring.jackson.* settings, for payloads. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "tools.jackson.databind.json.JsonMapper")
    static class Jackson3Payloads {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnSingleCandidate(tools.jackson.databind.json.JsonMapper.class)
        PayloadSerializer outboxkitPayloadSerializer(tools.jackson.databind.json.JsonMapper jsonMapper) {
            return jsonMapper::writeValueAsString;
        }
    }

    @Bean
    @ConditionalOnMissingBean
    SpringOutboxWriter springOutboxWriter(OutboxWriter writer, DataSource dataSource,
                                          ObjectProvider<WriteObserver> observers) {
        return new SpringOutboxWriter(writer, dataSource, observers.orderedStream().toList());
    }

    /** Domain events with {@link ToOutbox} or an {@link OutboxEventMapper} become outbox events. */
    @Bean
    @ConditionalOnMissingBean
    DomainEventsToOutbox outboxkitDomainEvents(SpringOutboxWriter outbox, ObjectProvider<OutboxEventMapper<?>> mappers) {
        return new DomainEventsToOutbox(outbox, mappers.orderedStream().toList());
    }

    @Bean
    @ConditionalOnMissingBean
    IdempotencyKeys idempotencyKeys(OutboxkitProperties properties, OutboxWriter writer,
                                    ObjectProvider<MeterRegistry> meterRegistry) {
        OutboxkitProperties.Idempotency i = properties.getIdempotency();
        IdempotencyKeys.Builder b = IdempotencyKeys.builder().schema(properties.getSchema()).lease(i.getLease())
                .retryAfter(i.getRetryAfter()).retention(i.getRetention()).writer(writer);
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
            OutboxkitProperties.Consumer c = properties.getConsumer();
            return new SpringInbox(dataSource, transactionManager, properties.getSchema(), c.getGroup(),
                    c.getLateArrival() == OutboxkitProperties.LateArrival.APPLY ? null : c.getRetention());
        }

        /** Forwards with the Spring Kafka producer settings of the application, keys and values as they were read. */
        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(ProducerFactory.class)
        SpringDeadLetters springDeadLetters(ProducerFactory<?, ?> producerFactory, OutboxkitProperties properties) {
            Map<String, Object> config = new HashMap<>(producerFactory.getConfigurationProperties());
            config.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
            config.put(ProducerConfig.ACKS_CONFIG, "all");
            config.put(ProducerConfig.LINGER_MS_CONFIG, "0");
            config.put(ProducerConfig.CLIENT_ID_CONFIG, "outboxkit-dead-letters");
            DefaultKafkaProducerFactory<Object, Object> factory = new DefaultKafkaProducerFactory<>(config,
                    new SpringDeadLetters.AsRead(), new SpringDeadLetters.AsRead());
            OutboxkitProperties.Consumer c = properties.getConsumer();
            return new SpringDeadLetters(new KafkaTemplate<>(factory), c.getGroup(), c.getMaxAttempts(), c.getLateArrival(),
                    Clock.systemUTC());
        }

        /**
         * The error handler of Boot's listener containers: retries with backoff, then {@link SpringDeadLetters};
         * undecodable records and late arrivals at once.
         */
        @Bean
        @ConditionalOnMissingBean(CommonErrorHandler.class)
        @ConditionalOnBean(SpringDeadLetters.class)
        @ConditionalOnBooleanProperty(name = "outboxkit.consumer.dead-letters", matchIfMissing = true)
        DefaultErrorHandler outboxkitErrorHandler(SpringDeadLetters deadLetters, OutboxkitProperties properties) {
            ExponentialBackOffWithMaxRetries backOff = new ExponentialBackOffWithMaxRetries(
                    properties.getConsumer().getMaxAttempts() - 1);
            backOff.setInitialInterval(200);
            backOff.setMultiplier(2);
            backOff.setMaxInterval(10_000);
            DefaultErrorHandler handler = new DefaultErrorHandler(deadLetters, backOff);
            handler.addNotRetryableExceptions(InvalidEventException.class, LateArrivalException.class);
            // A failure that is retried, or whose record was forwarded (SpringDeadLetters logs that), needs no operator:
            // WARN, not Spring's default ERROR (a batch listener's recovered record logged "Seek to current" as ERROR).
            handler.setLogLevel(org.springframework.kafka.KafkaException.Level.WARN);
            return handler;
        }
    }

    /** A relay inside the application, for {@code outboxkit.relay.mode=poll|cdc}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnExpression("'${outboxkit.relay.mode:none}'.trim().toLowerCase() != 'none'")
    static class Relays {

        @Bean
        @ConditionalOnMissingBean
        RelayLifecycle outboxkitRelay(OutboxkitProperties properties, Environment env,
                                      ObjectProvider<MeterRegistry> meterRegistry, ObjectProvider<RelayTracing> tracing) {
            RelaySettings settings = new RelaySettings(properties, env, registry(meterRegistry), tracing.getIfAvailable());
            return switch (properties.getRelay().getMode()) {
                case POLL -> {
                    requireClass("dev.outboxkit.relay.poller.PollingRelay", "poll", "relay-poller");
                    yield new RelayLifecycle(() -> PollRelays.build(settings));
                }
                case CDC -> {
                    requireClass("dev.outboxkit.relay.cdc.CdcRelay", "cdc", "relay-debezium");
                    yield new RelayLifecycle(() -> CdcRelays.build(settings));
                }
                case NONE -> throw new IllegalStateException("unreachable: outboxkit.relay.mode=none starts no relay");
            };
        }

        /** The application's OpenTelemetry (when it has one) for the relay: a PRODUCER span per published event. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "io.opentelemetry.api.OpenTelemetry")
        static class Tracing {

            @Bean
            @ConditionalOnMissingBean
            RelayTracing outboxkitRelayTracing(ObjectProvider<io.opentelemetry.api.OpenTelemetry> openTelemetry) {
                return new RelayTracing(openTelemetry);
            }
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

    /** The Actuator endpoint {@code outboxkit}, when Actuator and outbox-ops are on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint",
            "dev.outboxkit.ops.admin.OutboxAdmin"})
    static class ActuatorEndpoint {

        @Bean
        @ConditionalOnMissingBean
        @org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint(OutboxkitEndpoint.class)
        OutboxkitEndpoint outboxkitEndpoint(DataSource dataSource, OutboxkitProperties properties) {
            return new OutboxkitEndpoint(dev.outboxkit.ops.admin.OutboxAdmin.builder()
                    .outboxDatabase(dataSource, properties.getSchema()).build());
        }
    }

    /**
     * {@code outboxkit.console.enabled=true} without outbox-console or Actuator fails start-up naming what is missing:
     * the console lives in Actuator's management context ({@link OutboxkitConsoleConfiguration}) and would otherwise
     * just not be there.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty("outboxkit.console.enabled")
    static class ConsoleRequirements {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnMissingClass("dev.outboxkit.console.Console")
        static class WithoutOutboxConsole {
            WithoutOutboxConsole() {
                throw consoleNeeds("dev.outboxkit:outbox-console");
            }
        }

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnMissingClass("org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration")
        static class WithoutActuator {
            WithoutActuator() {
                throw consoleNeeds("org.springframework.boot:spring-boot-starter-actuator");
            }
        }

        private static IllegalStateException consoleNeeds(String dependency) {
            return new IllegalStateException("outboxkit.console.enabled=true needs " + dependency + " on the class path "
                    + "(the console is served next to the Actuator endpoints); add the dependency or set "
                    + "outboxkit.console.enabled=false");
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
