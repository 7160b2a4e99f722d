package dev.outboxkit.spring.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.console.Browser;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The console of a Spring Boot application in headless chromium: Spring Security's login form, then the dead-letter
 * page with its Retry button (the form carries Spring's CSRF token and the console's), and the overview. Screenshots
 * go to target/console-screenshots (spring-*.png). Without chromium the test is skipped with the fix
 * (outbox-console's Browser helper).
 */
@SpringBootTest(classes = ConsoleTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        ConsoleTestApplication.PROPERTIES_EXCLUDE,
        "spring.kafka.listener.auto-startup=false",
        "outboxkit.console.enabled=true",
        "outboxkit.console.write-actions=true"})
class ConsoleSpringBrowserTest {

    private static final Duration PAGE = Duration.ofSeconds(30);
    private static TestDatabase db;
    private static ChromeDriver browser;

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        db = ConsoleTestApplication.database(registry);
    }

    @BeforeAll
    static void startBrowser() {
        browser = Browser.start();
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    @LocalServerPort
    int port;

    @Test
    void anOperatorLogsInWithSpringSecurityAndRetriesADeadLetter() throws Exception {
        UUID id = UUID.randomUUID();
        ConsoleTestApplication.park(db, id, 700_001);
        String console = "http://127.0.0.1:" + port + ConsoleInManagementContextTest.BASE;

        browser.get(console + "/dead-letters");
        wait(PAGE).until(ExpectedConditions.presenceOfElementLocated(By.id("username")));
        browser.findElement(By.id("username")).sendKeys("oper");
        browser.findElement(By.id("password")).sendKeys("oper-pw");
        browser.findElement(By.cssSelector("button[type=submit]")).click();

        wait(PAGE).until(ExpectedConditions.textToBePresentInElementLocated(By.id("operator"), "oper"));
        assertThat(browser.getCurrentUrl()).startsWith(console + "/dead-letters");
        By retry = By.cssSelector("tr[data-id='" + id + "'] button.retry");
        wait(PAGE).until(ExpectedConditions.elementToBeClickable(retry));
        Browser.screenshot(browser, "spring-dead-letters");
        browser.findElement(retry).click();

        wait(PAGE).until(ExpectedConditions.textToBePresentInElementLocated(By.id("outcome-title"), "1 moved back to the outbox"));
        assertThat(browser.findElement(By.id("outcome")).getText()).contains(id.toString());
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", id)).isZero();
        assertThat(db.count("SELECT seq FROM outbox_event WHERE id = ?", id)).isEqualTo(700_001);

        browser.get(console + "/");
        wait(PAGE).until(ExpectedConditions.presenceOfElementLocated(By.id("backlog-total")));
        assertThat(browser.findElement(By.id("backlog-total")).getText())
                .isEqualTo(String.valueOf(db.count("SELECT count(*) FROM outbox_event WHERE published_at IS NULL")));
        Browser.screenshot(browser, "spring-overview");
    }

    private static WebDriverWait wait(Duration timeout) {
        return new WebDriverWait(browser, timeout);
    }
}
