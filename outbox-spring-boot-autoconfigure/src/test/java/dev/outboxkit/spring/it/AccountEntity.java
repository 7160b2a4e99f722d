package dev.outboxkit.spring.it;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** The ledger's account table as a JPA entity. */
@Entity
@Table(name = "account")
public class AccountEntity {

    @Id
    private String id;
    private long balance;

    protected AccountEntity() {
    }

    public AccountEntity(String id, long balance) {
        this.id = id;
        this.balance = balance;
    }

    public String getId() {
        return id;
    }

    public long getBalance() {
        return balance;
    }

    public void add(long amount) {
        balance += amount;
    }
}
