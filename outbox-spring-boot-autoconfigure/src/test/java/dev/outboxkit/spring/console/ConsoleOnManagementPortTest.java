package dev.outboxkit.spring.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** With management.server.port set, the console is served there (with the Actuator endpoints) and not on the main port. */
@SpringBootTest(classes = ConsoleTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        ConsoleTestApplication.PROPERTIES_EXCLUDE,
        "spring.kafka.listener.auto-startup=false",
        "management.server.port=0",
        "outboxkit.console.enabled=true",
        "outboxkit.console.write-actions=true"})
class ConsoleOnManagementPortTest {

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        ConsoleTestApplication.database(registry);
    }

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @Test
    void theManagementPortServesTheConsoleAndTheMainPortDoesNot() throws Exception {
        assertThat(managementPort).isNotEqualTo(port);
        ConsoleClient oper = new ConsoleClient("oper");
        HttpResponse<String> there = oper.get(managementPort, ConsoleInManagementContextTest.BASE + "/dead-letters");
        assertThat(there.statusCode()).as(there.body()).isEqualTo(200);
        assertThat(there.body()).contains("Logged in as <strong>oper</strong>").contains("href=\"" + ConsoleInManagementContextTest.BASE + "/events\"");
        assertThat(new ConsoleClient("nobody").get(managementPort, ConsoleInManagementContextTest.BASE + "/").statusCode())
                .as("Spring Security guards the management port too").isEqualTo(401);

        HttpResponse<String> main = oper.get(port, ConsoleInManagementContextTest.BASE + "/");
        assertThat(main.statusCode()).as(main.body()).isEqualTo(404);
    }
}
