package dev.outboxkit.spring.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** With outbox-console on the class path but outboxkit.console.enabled unset, there is no console. */
@SpringBootTest(classes = ConsoleTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        ConsoleTestApplication.PROPERTIES_EXCLUDE,
        "spring.kafka.listener.auto-startup=false"})
class ConsoleOffByDefaultTest {

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        ConsoleTestApplication.database(registry);
    }

    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @Test
    void noConsoleUnlessEnabled() throws Exception {
        assertThat(context.containsBean("outboxkitConsole")).isFalse();
        HttpResponse<String> r = new ConsoleClient("oper").get(port, ConsoleInManagementContextTest.BASE + "/");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(404);
        assertThat(r.body()).doesNotContain("outboxkit console");
    }
}
