package dev.outboxkit.spring.it;

import dev.outboxkit.spring.Idempotent;
import dev.outboxkit.spring.SpringOutboxWriter;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.Map;
import org.springframework.context.annotation.Profile;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Business code on JPA/Hibernate (JpaTransactionManager), as a Spring Data service writes it. */
@Service
@RestController
@Profile("jpa")
class JpaLedger {

    record Deposit(long amount) {
    }

    @PersistenceContext
    EntityManager em;

    private final SpringOutboxWriter outbox;

    JpaLedger(SpringOutboxWriter outbox) {
        this.outbox = outbox;
    }

    @Transactional
    public void open(String account) {
        em.persist(new AccountEntity(account, 0));
    }

    @Transactional
    public void deposit(String account, long amount, boolean failAfterWrite) {
        em.find(AccountEntity.class, account).add(amount);
        outbox.write(JdbcLedger.event(account, amount));
        if (failAfterWrite) {
            throw new IllegalStateException("business rule failed after the event was written");
        }
    }

    @Transactional(readOnly = true)
    public long balance(String account) {
        return em.find(AccountEntity.class, account).getBalance();
    }

    /** An @Idempotent endpoint whose work is JPA: the filter's transaction is a JPA one. */
    @Idempotent
    @PostMapping("/accounts/{id}/deposits")
    public ResponseEntity<Map<String, Object>> depositOverHttp(@PathVariable String id, @RequestBody Deposit deposit) {
        AccountEntity account = em.find(AccountEntity.class, id);
        account.add(deposit.amount());
        outbox.write(JdbcLedger.event(id, deposit.amount()));
        return ResponseEntity.status(201).body(Map.of("account", id, "balance", account.getBalance()));
    }
}
