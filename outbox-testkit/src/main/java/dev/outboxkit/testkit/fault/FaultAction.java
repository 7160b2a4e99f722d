package dev.outboxkit.testkit.fault;

import java.util.Objects;

/**
 * How a test injects and heals one type of fault on a named target, for
 * {@link FaultSchedule#run}: e.g. "blackhole" on the proxy named "relay-kafka", "kill9" on the
 * process named "relay-1" (heal: start it again).
 */
public interface FaultAction {

    /** Puts the fault in force on {@code target}. */
    void inject(String target) throws Exception;

    /** Ends the fault on {@code target}. Called after every {@link #inject}, even a failed one. */
    void heal(String target) throws Exception;

    /** One half of an action, as a lambda. */
    @FunctionalInterface
    interface Part {
        void apply(String target) throws Exception;
    }

    /** An action from two lambdas, e.g. {@code FaultAction.of(t -> proxies.get(t).blackhole(), t -> proxies.get(t).heal())}. */
    static FaultAction of(Part inject, Part heal) {
        Objects.requireNonNull(inject, "inject");
        Objects.requireNonNull(heal, "heal");
        return new FaultAction() {
            @Override
            public void inject(String target) throws Exception {
                inject.apply(target);
            }

            @Override
            public void heal(String target) throws Exception {
                heal.apply(target);
            }
        };
    }
}
