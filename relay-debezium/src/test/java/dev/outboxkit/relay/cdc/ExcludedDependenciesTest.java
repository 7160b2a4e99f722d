package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CDC relay runs without Kafka Connect's REST stack and plugin scanning, which this module's pom excludes under
 * debezium-embedded: so every test of this module proves that the relay never needs them. Fails if one of them comes
 * back on the class path (a new Debezium or Kafka version, another dependency bringing it).
 */
class ExcludedDependenciesTest {

    /** One class of each excluded artifact. */
    static final List<String> EXCLUDED = List.of(
            "org.eclipse.jetty.server.Server",                           // jetty-server (and jetty-http, -io, -util)
            "org.eclipse.jetty.client.HttpClient",                       // jetty-client
            "org.eclipse.jetty.ee10.servlet.ServletContextHandler",      // jetty-ee10-servlet
            "org.eclipse.jetty.ee10.servlets.CrossOriginFilter",         // jetty-ee10-servlets
            "org.glassfish.jersey.servlet.ServletContainer",             // jersey-container-servlet
            "org.glassfish.jersey.server.ResourceConfig",                // jersey-server
            "org.glassfish.jersey.inject.hk2.Hk2InjectionManagerFactory", // jersey-hk2
            "org.glassfish.hk2.api.ServiceLocator",                      // hk2-api
            "com.fasterxml.jackson.jakarta.rs.json.JacksonJsonProvider", // jackson-jakarta-rs-json-provider
            "jakarta.ws.rs.core.Application",                            // jakarta.ws.rs-api
            "jakarta.servlet.Servlet",                                   // jakarta.servlet-api
            "javax.xml.bind.JAXB",                                       // jaxb-api
            "io.swagger.v3.oas.annotations.Operation",                   // swagger-annotations
            "io.github.classgraph.ClassGraph",                           // classgraph
            "org.apache.kafka.connect.file.FileStreamSourceConnector");  // connect-file

    @Test
    void kafkaConnectsRestStackIsNotOnTheClassPath() {
        ClassLoader loader = getClass().getClassLoader();
        for (String name : EXCLUDED) {
            assertThat(loader.getResource(name.replace('.', '/') + ".class")).as(name).isNull();
        }
        // what Debezium Embedded does use of Connect is there
        assertThat(loader.getResource("org/apache/kafka/connect/runtime/WorkerConfig.class")).isNotNull();
        assertThat(loader.getResource("io/debezium/embedded/async/AsyncEmbeddedEngine.class")).isNotNull();
        // needed: the engine's configuration check (ConnectorConfig) loads maven-artifact's version classes
        assertThat(loader.getResource("org/apache/maven/artifact/versioning/VersionRange.class")).isNotNull();
    }
}
