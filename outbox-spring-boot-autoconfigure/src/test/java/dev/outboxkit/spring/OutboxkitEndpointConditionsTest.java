package dev.outboxkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The outboxkit endpoint is configured only with Actuator and outbox-ops on the class path, and only when exposed. */
class OutboxkitEndpointConditionsTest {

    private static final TestDatabase DB = OutboxTestkit.postgres().newDatabase();

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, OutboxkitAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + DB.jdbcUrl(), "spring.datasource.username=" + DB.user(),
                        "spring.datasource.password=" + DB.password());
    }

    @Test
    void exposedWithActuatorAndOutboxOps() {
        runner().withPropertyValues("management.endpoints.web.exposure.include=outboxkit")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(OutboxkitEndpoint.class));
    }

    @Test
    void notExposedMeansNoBean() {
        runner().run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(OutboxkitEndpoint.class));
    }

    @Test
    void withoutActuatorOrOutboxOpsThereIsNoEndpoint() {
        runner().withPropertyValues("management.endpoints.web.exposure.include=outboxkit")
                .withClassLoader(new FilteredClassLoader(Endpoint.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(OutboxkitEndpoint.class));
        runner().withPropertyValues("management.endpoints.web.exposure.include=outboxkit")
                .withClassLoader(new FilteredClassLoader(OutboxAdmin.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(OutboxkitEndpoint.class));
    }
}
