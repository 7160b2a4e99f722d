package dev.outboxkit.testkit;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * Machine tools a test runs for real (pgbouncer, chromium): found on the PATH or in the given directories. When one is
 * missing the calling test is reported skipped with the command that installs it; where
 * {@code OUTBOXKIT_REQUIRE_TOOLS=true} (CI, whose {@code .ci/run} installs them) it fails instead.
 */
public final class RequiredTools {

    private RequiredTools() {
    }

    /**
     * The executable {@code name}, looked for on the PATH, then in {@code moreDirs}.
     *
     * @param debianPackage the package that installs it, for the message
     */
    public static Path require(String name, String debianPackage, List<String> moreDirs) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        dirs.addAll(moreDirs);
        return require(name, debianPackage, dirs, moreDirs, Boolean.parseBoolean(System.getenv("OUTBOXKIT_REQUIRE_TOOLS")));
    }

    /** {@link #require(String, String, List)} looking in {@code dirs} only; {@code required}: fail rather than skip. */
    static Path require(String name, String debianPackage, List<String> dirs, List<String> named, boolean required) {
        for (String d : dirs) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, name))) {
                return Path.of(d, name);
            }
        }
        String message = name + " is not installed (not on the PATH" + (named.isEmpty() ? "" : ", nor in " + String.join(", ", named))
                + "); install it with: apt-get update && apt-get install -y " + debianPackage + " (.ci/run does)";
        if (required) {
            throw new AssertionError(message + "; OUTBOXKIT_REQUIRE_TOOLS=true, so this test may not be skipped");
        }
        Assumptions.abort(message);
        throw new AssertionError("unreachable");
    }
}
