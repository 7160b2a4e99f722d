package dev.outboxkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.console.Console;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** outboxkit.console.enabled=true without outbox-console or Actuator fails start-up, naming the dependency to add. */
class ConsoleRequirementsTest {

    private static final TestDatabase DB = OutboxTestkit.postgres().newDatabase();

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, OutboxkitAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + DB.jdbcUrl(), "spring.datasource.username=" + DB.user(),
                        "spring.datasource.password=" + DB.password());
    }

    @Test
    void enabledWithoutOutboxConsoleOrActuatorFailsNamingTheDependency() {
        runner().withPropertyValues("outboxkit.console.enabled=true").withClassLoader(new FilteredClassLoader(Console.class))
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("outboxkit.console.enabled=true needs dev.outboxkit:outbox-console"));
        runner().withPropertyValues("outboxkit.console.enabled=true")
                .withClassLoader(new FilteredClassLoader(ManagementContextConfiguration.class))
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("needs org.springframework.boot:spring-boot-starter-actuator"));
    }

    @Test
    void offOrWithBothOnTheClassPathStartsAsUsual() {
        runner().withClassLoader(new FilteredClassLoader(Console.class)).run(context -> assertThat(context).hasNotFailed());
        runner().withPropertyValues("outboxkit.console.enabled=true").run(context -> assertThat(context).hasNotFailed());
    }
}
