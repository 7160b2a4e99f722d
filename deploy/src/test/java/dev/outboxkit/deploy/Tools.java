package dev.outboxkit.deploy;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The real tools these tests run (Debian's prometheus, promtool, kubectl). A missing one is reported by name with the
 * command that installs it: the test is skipped on a developer's machine, and fails where
 * {@code OUTBOXKIT_REQUIRE_TOOLS=true} (set by .ci/run, which installs them), so CI never skips.
 */
final class Tools {

    private Tools() {
    }

    /** The executable {@code name} on the PATH. */
    static Path require(String name, String debianPackage) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, name);
            if (!dir.isEmpty() && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        String message = name + " is not on the PATH; install it with: apt-get update && apt-get install -y " + debianPackage
                + " (.ci/run does)";
        if (Boolean.parseBoolean(System.getenv("OUTBOXKIT_REQUIRE_TOOLS"))) {
            throw new AssertionError(message + "; OUTBOXKIT_REQUIRE_TOOLS=true, so this test may not be skipped");
        }
        Assumptions.abort(message);
        throw new AssertionError("unreachable");
    }

    /** What a finished command printed (stdout and stderr together) and its exit code. */
    record Result(int exitCode, String output) {
    }

    /** Runs a command to its end (at most {@code timeout}). */
    static Result run(Duration timeout, Path workingDir, String... command) {
        try {
            Path log = Files.createTempFile("outboxkit-tool", ".log");
            Process p = new ProcessBuilder(command).directory(workingDir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish within " + timeout + ":\n"
                        + Files.readString(log, StandardCharsets.UTF_8));
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            Files.deleteIfExists(log);
            return new Result(p.exitValue(), out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command[0], e);
        }
    }
}
