package dev.outboxkit.spring.it;

import dev.outboxkit.spring.SpringOutboxWriter;
import dev.outboxkit.writer.OutboxMessage;
import org.springframework.context.annotation.Profile;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/** Business code in @Transactional methods with JdbcTemplate, as a Spring service writes it. */
@Service
@Profile("jdbc")
class JdbcLedger {

    private final JdbcTemplate jdbc;
    private final SpringOutboxWriter outbox;

    JdbcLedger(JdbcTemplate jdbc, SpringOutboxWriter outbox) {
        this.jdbc = jdbc;
        this.outbox = outbox;
    }

    @Transactional
    void deposit(String account, long amount, boolean failAfterWrite) {
        jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", amount, account);
        outbox.write(event(account, amount));
        if (failAfterWrite) {
            throw new IllegalStateException("business rule failed after the event was written");
        }
    }

    /** SUPPORTS without a caller's transaction: no transaction at all. */
    @Transactional(propagation = Propagation.SUPPORTS)
    void depositWithoutTransaction(String account, long amount) {
        jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", amount, account);
        outbox.write(event(account, amount));
    }

    static OutboxMessage event(String account, long amount) {
        return OutboxMessage.builder("account", account, "MoneyDeposited")
                .payloadJson("{\"account\":\"" + account + "\",\"amount\":" + amount + "}").build();
    }
}
