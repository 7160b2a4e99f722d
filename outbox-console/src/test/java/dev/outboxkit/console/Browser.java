package dev.outboxkit.console;

import dev.outboxkit.testkit.RequiredTools;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The machine's chromium, headless, driven through its own chromedriver (both named explicitly, so Selenium Manager
 * never looks for or downloads a browser). Missing: the test is skipped with the fix, or fails where
 * {@code OUTBOXKIT_REQUIRE_TOOLS=true}. Public for the Spring Boot console's browser test (this module's test jar).
 */
public final class Browser {

    public static final Path SCREENSHOTS = Path.of("target/console-screenshots");

    private Browser() {
    }

    public static ChromeDriver start() {
        Path chromium = RequiredTools.require("chromium", "chromium chromium-driver", List.of("/usr/bin"));
        Path driver = RequiredTools.require("chromedriver", "chromium chromium-driver", List.of("/usr/bin"));
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver.toFile())
                .usingAnyFreePort().build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.toFile());
        // --no-sandbox: the tests may run as root, where chromium's sandbox refuses to start.
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1000", "--lang=en-US");
        // the browser's console (CSP violations, script errors) for browserErrors()
        options.setCapability("goog:loggingPrefs", java.util.Map.of("browser", "ALL"));
        ChromeDriver browser = new ChromeDriver(service, options);
        browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(60));
        return browser;
    }

    /** The browser console's warnings and errors since the last call (a CSP violation is one). */
    static java.util.List<String> browserErrors(ChromeDriver browser) {
        return browser.manage().logs().get(org.openqa.selenium.logging.LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue())
                .map(e -> e.getLevel() + " " + e.getMessage()).toList();
    }

    /** Saves what the browser shows as target/console-screenshots/{@code name}.png (the docs' images come from here). */
    public static void screenshot(ChromeDriver browser, String name) {
        try {
            Files.createDirectories(SCREENSHOTS);
            Path shot = browser.getScreenshotAs(OutputType.FILE).toPath();
            Files.copy(shot, SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot save the screenshot " + name, e);
        }
    }
}
