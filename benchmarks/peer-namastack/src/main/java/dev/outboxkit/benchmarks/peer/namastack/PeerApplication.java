package dev.outboxkit.benchmarks.peer.namastack;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The minimal Spring Boot application the benchmarks measure as the namastack-outbox peer. Scheduling is enabled
 * because namastack-outbox polls its table from a {@code @Scheduled} method (its quickstart asks for
 * {@code @EnableScheduling}). Settings: {@code application.properties} beside it; what the benchmark varies per
 * run (database, broker, topic) comes in as properties from {@link Peer#start}.
 */
@SpringBootApplication
@EnableScheduling
public class PeerApplication {
}
