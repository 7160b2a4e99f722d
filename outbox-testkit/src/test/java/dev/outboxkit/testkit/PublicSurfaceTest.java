package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.testkit.surfacefixture.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checker finds every kind of leak in surfacefixture, and nothing else. */
class PublicSurfaceTest {

    private static final String F = "dev.outboxkit.testkit.surfacefixture.Fixtures$";
    private static final String HIDDEN = "dev.outboxkit.testkit.surfacefixture.internal.Hidden";

    @Test
    void everyKindOfLeakIsNamedAndNothingElse() {
        assertThat(PublicSurface.leaks(Fixtures.class, "dev.outboxkit.testkit.surfacefixture")).containsExactly(
                F + "Bound#get() return type names " + HIDDEN,
                F + "Bound#get() type parameter T names " + HIDDEN,
                F + "ClassBound type parameter T names " + HIDDEN + "$Api",
                F + "Constructor#<init>(Hidden) parameter 1 names " + HIDDEN,
                F + "Interface interface names " + HIDDEN + "$Api",
                F + "Outer$Inner#get() return type names " + HIDDEN,
                F + "Parameter#take(String, List) parameter 2 names " + HIDDEN,
                F + "ProtectedMethod#get() return type names " + HIDDEN,
                F + "PublicField#field field names " + HIDDEN,
                F + "ReturnType#get() return type names " + HIDDEN,
                F + "Superclass superclass names " + HIDDEN,
                F + "Throws#run() throws names " + HIDDEN + "$Failure");
    }

    @Test
    void internalPackagesThemselvesAreNotChecked() {
        assertThat(PublicSurface.leaks(Fixtures.class, "dev.outboxkit.testkit.surfacefixture.internal")).isEmpty();
    }

    @Test
    void aPackageWithNoClassesIsAMistakeNotAPass() {
        assertThatThrownBy(() -> PublicSurface.leaks(Fixtures.class, "dev.outboxkit.nosuch"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("no classes of [dev.outboxkit.nosuch] in ")
                .hasMessageEndingWith(": check the package names");
    }

    @Test
    void publicInternalTypesMustSayNotApi(@TempDir Path src) throws Exception {
        Path internal = Files.createDirectories(src.resolve("a/internal"));
        Files.writeString(internal.resolve("Noted.java"), "package a.internal;\n\n/** Not API: used by a.Api. */\n"
                + "public final class Noted {\n}\n");
        Files.writeString(internal.resolve("Annotated.java"), "package a.internal;\n\n/**\n * Not API: for a.Api.\n */\n"
                + "@SuppressWarnings(\"x\")\npublic record Annotated(int x) {\n}\n");
        Files.writeString(internal.resolve("PackagePrivate.java"), "package a.internal;\n\nfinal class PackagePrivate {\n"
                + "    public static class Nested {\n    }\n}\n");
        Files.writeString(internal.resolve("Silent.java"), "package a.internal;\n\n/** Does things. */\npublic class Silent {\n}\n");
        Files.writeString(internal.resolve("Bare.java"), "package a.internal;\n\npublic interface Bare {\n}\n");
        Files.writeString(internal.resolve("Exempt.java"), "package a.internal;\n\npublic interface Exempt {\n}\n");
        Files.writeString(Files.createDirectories(src.resolve("a")).resolve("Api.java"), "package a;\n\npublic class Api {\n}\n");

        assertThat(PublicSurface.internalTypesWithoutNotApiNote(src, "Exempt.java"))
                .isEqualTo(List.of("a/internal/Bare.java", "a/internal/Silent.java"));
    }
}
