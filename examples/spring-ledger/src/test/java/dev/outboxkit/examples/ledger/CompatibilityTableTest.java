package dev.outboxkit.examples.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.postgresql.util.DriverInfo;
import org.springframework.boot.SpringBootVersion;

/**
 * The versions a Boot line resolved for the sample are that line's row of the compatibility table. Runs in each
 * spring-boot-lines/ module, in the JVM where LedgerApplicationTest boots the sample on exactly these jars.
 */
class CompatibilityTableTest {

    @Test
    void theVersionsThisBootLineResolvedAreItsRowOfTheCompatibilityTable() {
        String row = "| " + String.join(" | ", SpringBootVersion.getVersion(),
                CompatibilityTable.mavenVersion("org.flywaydb", "flyway-core"),
                CompatibilityTable.mavenVersion("com.zaxxer", "HikariCP"), DriverInfo.DRIVER_VERSION,
                CompatibilityTable.mavenVersion("tools.jackson.core", "jackson-databind"),
                CompatibilityTable.mavenVersion("com.fasterxml.jackson.core", "jackson-databind"),
                CompatibilityTable.mavenVersion("ch.qos.logback", "logback-classic")) + " |";
        assertThat(CompatibilityTable.rows()).as("%s, 'Supported Spring Boot lines', must have the row of what this "
                + "line resolved: %s", CompatibilityTable.README, row).contains(row);
    }

    @Test
    void theTablesRowsAreTheLinesTheBuildRuns() {
        assertThat(CompatibilityTable.bootVersions()).as("the Boot versions of %s's table and the "
                + "spring-boot-starter-parent versions of spring-boot-lines/*/pom.xml", CompatibilityTable.README)
                .isEqualTo(CompatibilityTable.linesRun());
    }
}
