package dev.outboxkit.examples.ledger;

import dev.outboxkit.spring.test.AutoConfigureOutboxEvents;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample on an empty database and Kafka from the testkit, one context for every test class that
 * extends it (Spring caches it), with the outbox events it writes recorded ({@link AutoConfigureOutboxEvents}).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureOutboxEvents
abstract class LedgerTest {

    @DynamicPropertySource
    static void infrastructure(DynamicPropertyRegistry registry) {
        TestDatabase db = OutboxTestkit.postgres().newEmptyDatabase();   // the app's migration applies the outboxkit schema
        TestKafka kafka = OutboxTestkit.kafka();
        kafka.createTopic("outbox.event.transfer", 3);
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", db::user);
        registry.add("spring.datasource.password", db::password);
        registry.add("spring.kafka.bootstrap-servers", kafka::bootstrapServers);
    }
}
