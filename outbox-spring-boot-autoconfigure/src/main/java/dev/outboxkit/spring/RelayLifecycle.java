package dev.outboxkit.spring;

import dev.outboxkit.relay.Relay;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs a relay with the application context: started after every bean is ready, stopped
 * gracefully (batch in flight finished, leases released) before the context closes its
 * DataSource and producers. A relay cannot start again once closed, so a start after a stop (a
 * context stopped and started again, as Spring's test context cache does with idle contexts)
 * runs a new one. Not API: registered by the auto-configuration for
 * {@code outboxkit.relay.mode=poll|cdc}.
 */
final class RelayLifecycle implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(RelayLifecycle.class);

    private final Supplier<Relay> factory;
    private volatile Relay relay;
    private volatile boolean running;
    private boolean closed;

    /** Builds the first relay now, so a configuration error fails the bean's creation. */
    RelayLifecycle(Supplier<Relay> factory) {
        this.factory = factory;
        this.relay = factory.get();
    }

    Relay relay() {
        return relay;
    }

    @Override
    public synchronized void start() {
        if (!running) {
            if (closed) {
                relay = factory.get();
                closed = false;
            }
            relay.start();
            running = true;
            log.info("outboxkit relay started: {}", relay.health().detail());
        }
    }

    @Override
    public synchronized void stop() {
        if (running) {
            running = false;
            closed = true;
            relay.close();
            log.info("outboxkit relay stopped");
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Start last, stop first: the relay needs the rest of the application, nothing needs the relay. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 1024;
    }
}
