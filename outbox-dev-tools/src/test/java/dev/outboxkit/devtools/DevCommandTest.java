package dev.outboxkit.devtools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.cli.Main;
import dev.outboxkit.testkit.JavaProcess;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;

class DevCommandTest {

    @Test
    void devStackServesOtherProcessesAndStopsCleanlyOnSigterm() throws Exception {
        try (JavaProcess dev = JavaProcess.start("outbox-dev", Main.class, List.of("dev"), List.of(), Map.of())) {
            assertThat(dev.awaitOutput("export OUTBOX_BOOTSTRAP_SERVERS=", Duration.ofSeconds(120))).as(dev.output()).isTrue();
            String url = value(dev.output(), "OUTBOX_JDBC_URL");
            String bootstrap = value(dev.output(), "OUTBOX_BOOTSTRAP_SERVERS");

            Properties props = new Properties();
            props.setProperty("user", value(dev.output(), "OUTBOX_USER"));
            props.setProperty("password", value(dev.output(), "OUTBOX_PASSWORD"));
            try (Connection c = DriverManager.getConnection(url, props);
                 ResultSet rs = c.createStatement().executeQuery("SELECT current_setting('wal_level'), count(*) FROM outbox_event")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("logical");
                assertThat(rs.getLong(2)).isZero();
            }
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
                admin.createTopics(List.of(new NewTopic("dev-check", 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
                assertThat(admin.listTopics().names().get(60, TimeUnit.SECONDS)).contains("dev-check");
            }

            assertThat(dev.terminate(Duration.ofSeconds(60))).as(dev.output()).isZero();
            assertThat(dev.output()).contains("stopping the dev stack");
            int port = Integer.parseInt(url.replaceAll(".*:(\\d+)/.*", "$1"));
            assertThat(isListening(port)).as("PostgreSQL stopped").isFalse();
        }
    }

    private static String value(String output, String variable) {
        Matcher m = Pattern.compile("export " + variable + "=(\\S+)").matcher(output);
        assertThat(m.find()).as(variable + " in " + output).isTrue();
        return m.group(1);
    }

    private static boolean isListening(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
