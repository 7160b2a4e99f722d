package dev.outboxkit.runtime;

import dev.outboxkit.relay.Relay;

/**
 * Not API: how both relays judge their health, written once. Before the start a relay is live and never ready, and
 * says what the start waits for; once running it is live while its parts run, and ready while it is live and none of
 * its problems is there; the detail is its status followed by each problem. Each relay then lets
 * {@link KafkaReachability#applyTo} judge Kafka, last.
 */
public final class RelayHealth {

    private RelayHealth() {
    }

    /** Live, not ready: {@code prefix} and what the start waits for ({@code contact}'s status), or "not started". */
    public static Relay.Health beforeStart(String prefix, DatabaseAtStart contact) {
        String waiting = contact == null ? null : contact.status();
        return new Relay.Health(true, false, prefix + (waiting != null ? waiting : "not started"));
    }

    /**
     * A started relay: {@code live} as its parts say; ready when live and every one of {@code problems} is null; the
     * detail is {@code status}, then each problem there is, separated by "; ".
     */
    public static Relay.Health running(String status, boolean live, String... problems) {
        StringBuilder detail = new StringBuilder(status);
        boolean ready = live;
        for (String problem : problems) {
            if (problem != null) {
                detail.append("; ").append(problem);
                ready = false;
            }
        }
        return new Relay.Health(live, ready, detail.toString());
    }
}
