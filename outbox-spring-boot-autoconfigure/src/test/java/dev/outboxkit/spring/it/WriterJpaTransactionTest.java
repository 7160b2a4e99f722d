package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.spring.SpringOutboxWriter;
import dev.outboxkit.testkit.TestDatabase;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.PlatformTransactionManager;

/** SpringOutboxWriter and @Idempotent join JPA/Hibernate transactions (JpaTransactionManager). */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.jpa.hibernate.ddl-auto=none", "spring.jpa.open-in-view=false", "spring.kafka.listener.auto-startup=false"})
@ActiveProfiles("jpa")
class WriterJpaTransactionTest {

    static TestDatabase db;

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        db = TestApplication.database(registry);
    }

    @Autowired
    JpaLedger ledger;
    @Autowired
    SpringOutboxWriter outbox;
    @Autowired
    PlatformTransactionManager transactionManager;
    @Autowired
    JdbcTemplate jdbc;
    @LocalServerPort
    int port;

    long events(String account) {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", Long.class, account);
    }

    @Test
    void theTransactionManagerIsJpa() {
        assertThat(transactionManager).isInstanceOf(JpaTransactionManager.class);
    }

    @Test
    void eventsCommitWithTheEntityChange() {
        String account = "jpa-" + UUID.randomUUID();
        ledger.open(account);
        ledger.deposit(account, 40, false);
        assertThat(ledger.balance(account)).isEqualTo(40);
        assertThat(events(account)).isEqualTo(1);
    }

    @Test
    void aRolledBackTransactionLeavesNeitherTheChangeNorTheEvent() {
        String account = "jpa-" + UUID.randomUUID();
        ledger.open(account);
        assertThatThrownBy(() -> ledger.deposit(account, 40, true)).isInstanceOf(IllegalStateException.class);
        assertThat(ledger.balance(account)).isZero();
        assertThat(events(account)).isZero();
    }

    @Test
    void aCallOutsideATransactionIsRefused() {
        String account = "jpa-" + UUID.randomUUID();
        assertThatThrownBy(() -> outbox.write(JdbcLedger.event(account, 1))).isInstanceOf(IllegalTransactionStateException.class);
        assertThat(events(account)).isZero();
    }

    @Test
    void anIdempotentEndpointOnJpaCommitsOnceAndReplays() throws Exception {
        String account = "jpa-" + UUID.randomUUID();
        ledger.open(account);
        String key = UUID.randomUUID().toString();
        HttpRequest request = TestApplication.post(port, "/accounts/" + account + "/deposits", "alice", key, "{\"amount\":15}");
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<byte[]> first = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        HttpResponse<byte[]> retry = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(ledger.balance(account)).isEqualTo(15);
        assertThat(events(account)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT state FROM idempotency_key WHERE idem_key = ?", String.class, key))
                .isEqualTo("completed");
    }
}
