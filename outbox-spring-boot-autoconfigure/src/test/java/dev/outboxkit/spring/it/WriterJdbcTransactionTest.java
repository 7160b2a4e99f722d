package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.spring.SpringOutboxWriter;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** SpringOutboxWriter joins JdbcTemplate's transaction under a DataSourceTransactionManager. */
class WriterJdbcTransactionTest extends JdbcAppTest {

    @Autowired
    JdbcLedger ledger;
    @Autowired
    SpringOutboxWriter outbox;
    @Autowired
    PlatformTransactionManager transactionManager;

    @Test
    void theTransactionManagerIsJdbc() {
        assertThat(transactionManager).isInstanceOf(JdbcTransactionManager.class);
    }

    @Test
    void eventsCommitWithTheBusinessChange() {
        String account = "jdbc-" + UUID.randomUUID();
        jdbc.update("INSERT INTO account VALUES (?, 0)", account);
        ledger.deposit(account, 25, false);
        assertThat(count("SELECT balance FROM account WHERE id = ?", account)).isEqualTo(25);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", account)).isEqualTo(1);
    }

    @Test
    void aRolledBackTransactionLeavesNoEvent() {
        String account = "jdbc-" + UUID.randomUUID();
        jdbc.update("INSERT INTO account VALUES (?, 0)", account);
        assertThatThrownBy(() -> ledger.deposit(account, 25, true)).isInstanceOf(IllegalStateException.class);
        assertThat(count("SELECT balance FROM account WHERE id = ?", account)).isZero();
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", account)).isZero();
    }

    @Test
    void aCallOutsideATransactionIsRefusedAndWritesNothing() {
        String account = "jdbc-" + UUID.randomUUID();
        assertThatThrownBy(() -> outbox.write(JdbcLedger.event(account, 1)))
                .isInstanceOf(IllegalTransactionStateException.class)
                .hasMessageContaining("outside a transaction").hasMessageContaining("@Transactional");
        assertThatThrownBy(() -> ledger.depositWithoutTransaction(account, 1))
                .isInstanceOf(IllegalTransactionStateException.class);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", account)).isZero();
    }

    @Test
    void transactionTemplateWorksTooAndReturnsTheIds() {
        String account = "jdbc-" + UUID.randomUUID();
        List<UUID> ids = new TransactionTemplate(transactionManager).execute(status ->
                outbox.write(JdbcLedger.event(account, 1), JdbcLedger.event(account, 2)));
        assertThat(ids).hasSize(2);
        assertThat(jdbc.queryForList("SELECT id FROM outbox_event WHERE aggregate_id = ? ORDER BY seq", UUID.class, account))
                .isEqualTo(ids);
    }
}
