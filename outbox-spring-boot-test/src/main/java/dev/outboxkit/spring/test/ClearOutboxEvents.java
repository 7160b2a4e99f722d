package dev.outboxkit.spring.test;

import org.springframework.core.Ordered;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestExecutionListener;

/** Clears {@link OutboxEvents} before each test method, so each test sees what it wrote. */
final class ClearOutboxEvents implements TestExecutionListener, Ordered {

    @Override
    public void beforeTestMethod(TestContext testContext) {
        // a test class without a loaded context (or without the annotation) is none of ours: never load one here
        if (testContext.hasApplicationContext()) {
            testContext.getApplicationContext().getBeanProvider(OutboxEvents.class).ifAvailable(OutboxEvents::clear);
        }
    }

    @Override
    public int getOrder() {
        return 3_500;  // after dependency injection (2000), before the test's transaction begins (4000)
    }
}
