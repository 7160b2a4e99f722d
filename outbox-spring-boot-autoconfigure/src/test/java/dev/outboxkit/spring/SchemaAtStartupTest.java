package dev.outboxkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.sql.Migrations;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The schema at start-up, on empty databases of the testkit's PostgreSQL: migrated when
 * outboxkit.migration.enabled=true (ahead of the application's own database initialization, here
 * a Spring SQL script that needs the outboxkit tables), and a start-up failure that names the
 * property when it is false and the tables are missing.
 */
class SchemaAtStartupTest {

    private static ApplicationContextRunner runner(TestDatabase db) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
                        DataSourceInitializationAutoConfiguration.class, OutboxkitAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + db.jdbcUrl(), "spring.datasource.username=" + db.user(),
                        "spring.datasource.password=" + db.password());
    }

    @Test
    void migrationEnabledMigratesAnEmptyDatabaseBeforeTheApplicationsOwnScripts() {
        TestDatabase db = OutboxTestkit.postgres().newEmptyDatabase();
        runner(db).withPropertyValues("outboxkit.migration.enabled=true", "spring.sql.init.mode=always",
                        "spring.sql.init.schema-locations=classpath:outboxkit-test/needs-outboxkit.sql")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(SpringOutboxWriter.class)
                            .doesNotHaveBean(OutboxkitAutoConfiguration.SchemaCheck.class);
                    DataSource ds = context.getBean(DataSource.class);
                    assertThat(Migrations.currentVersion(ds, "public")).isNotNull();
                    assertThat(context.getBean(JdbcTemplate.class).queryForObject(
                            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'app_audit'", Long.class))
                            .as("the application's script ran after outboxkit's migration").isEqualTo(1);
                });
    }

    @Test
    void migrationDisabledWithTheSchemaMissingFailsStartUpNamingTheProperty() {
        TestDatabase db = OutboxTestkit.postgres().newEmptyDatabase();
        runner(db).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("\"public\".\"outbox_event\" does not exist")
                    .hasMessageContaining(db.name())
                    .hasMessageContaining("outboxkit.migration.enabled=true")
                    .hasMessageContaining("outbox migrate");
        });
    }

    @Test
    void migrationDisabledWithTheSchemaAppliedStarts() {
        TestDatabase db = OutboxTestkit.postgres().newDatabase();
        runner(db).run(context -> assertThat(context).hasNotFailed().hasSingleBean(OutboxkitAutoConfiguration.SchemaCheck.class)
                .doesNotHaveBean(OutboxkitAutoConfiguration.SchemaMigration.class));
    }
}
