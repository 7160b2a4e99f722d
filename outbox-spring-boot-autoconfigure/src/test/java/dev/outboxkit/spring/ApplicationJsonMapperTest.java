package dev.outboxkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.PayloadSerializer;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JacksonModule;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.ValueSerializer;
import tools.jackson.databind.module.SimpleModule;

/**
 * Payloads go through the application's own JSON mapper: Boot's Jackson 3 JsonMapper with a module the
 * application registered and a spring.jackson setting, both visible in the row written to outbox_event.
 */
class ApplicationJsonMapperTest {

    record Money(long cents, String currency) {
    }

    record Deposited(String accountId, Money amount) {
    }

    private static ApplicationContextRunner runner(TestDatabase db) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, JacksonAutoConfiguration.class,
                        OutboxkitAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + db.jdbcUrl(), "spring.datasource.username=" + db.user(),
                        "spring.datasource.password=" + db.password());
    }

    /** The application's module: Money as "12.50 EUR". */
    static JacksonModule moneyAsText() {
        return new SimpleModule("money").addSerializer(Money.class, new ValueSerializer<>() {
            @Override
            public void serialize(Money m, JsonGenerator g, SerializationContext ctxt) {
                g.writeString(m.cents() / 100 + "." + String.format("%02d", m.cents() % 100) + " " + m.currency());
            }
        });
    }

    private static String writeAndRead(ApplicationContext context, TestDatabase db, String aggregateId) throws SQLException {
        SpringOutboxWriter writer = context.getBean(SpringOutboxWriter.class);
        new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(s -> writer.write(
                OutboxMessage.builder("account", aggregateId, "Deposited").payload(new Deposited(aggregateId, new Money(1250, "EUR")))
                        .build()));
        return db.strings("SELECT payload::text FROM outbox_event WHERE aggregate_id = '" + aggregateId + "'").get(0);
    }

    @Test
    void theApplicationsModulesAndSettingsShowInTheWrittenPayload() {
        TestDatabase db = OutboxTestkit.postgres().newDatabase();
        runner(db).withPropertyValues("spring.jackson.property-naming-strategy=SNAKE_CASE")
                .withBean("moneyAsText", JacksonModule.class, ApplicationJsonMapperTest::moneyAsText)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(PayloadSerializer.class);
                    assertThat(writeAndRead(context, db, "acc-1"))
                            .isEqualTo("{\"amount\": \"12.50 EUR\", \"account_id\": \"acc-1\"}");
                });
    }

    @Test
    void anApplicationsOwnSerializerWinsOverItsJsonMapper() {
        TestDatabase db = OutboxTestkit.postgres().newDatabase();
        runner(db).withBean(PayloadSerializer.class, () -> payload -> "{\"own\": true}")
                .run(context -> assertThat(writeAndRead(context, db, "acc-2")).isEqualTo("{\"own\": true}"));
    }
}
