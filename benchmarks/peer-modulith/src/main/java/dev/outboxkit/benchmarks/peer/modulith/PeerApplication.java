package dev.outboxkit.benchmarks.peer.modulith;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;

/**
 * The minimal Spring Boot application the benchmarks measure as the Spring Modulith peer. Its settings are in
 * {@code application.properties} beside it; what the benchmark varies per run (database, broker, topic) comes in
 * as properties from {@link Peer#start}.
 */
@SpringBootApplication
public class PeerApplication {

    /**
     * The documented programmatic externalization configuration: events annotated {@code @Externalized}, routed
     * to the run's topic ({@code peer.topic}) with the aggregate as the Kafka key. Static, because the event
     * listener factory that reads it is created before ordinary configuration beans.
     */
    @Bean
    static EventExternalizationConfiguration externalization(@Value("${peer.topic}") String topic) {
        return EventExternalizationConfiguration.externalizing()
                .select(EventExternalizationConfiguration.annotatedAsExternalized())
                .route(TransferMade.class, event -> RoutingTarget.forTarget(topic).andKey(event.aggregateId()))
                .build();
    }
}
