package dev.outboxkit.spring.it;

import dev.outboxkit.testkit.TestDatabase;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * One application context for the JDBC tests (DataSourceTransactionManager: JPA excluded), on a
 * real Tomcat port, its own database on the testkit's PostgreSQL. Subclasses share it.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
                + "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
        "spring.kafka.listener.auto-startup=false"})
@ActiveProfiles("jdbc")
abstract class JdbcAppTest {

    static TestDatabase db;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        db = TestApplication.database(registry);
    }

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    long count(String sql, Object... args) {
        Long n = jdbc.queryForObject(sql, Long.class, args);
        return n == null ? 0 : n;
    }

    HttpRequest post(String path, String user, String key, String json) {
        return TestApplication.post(port, path, user, key, json);
    }

    HttpResponse<byte[]> send(HttpRequest request) throws IOException, InterruptedException {
        return HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    CompletableFuture<HttpResponse<byte[]>> sendAsync(HttpRequest request) {
        return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray());
    }
}
