package dev.outboxkit.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.PublicSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What a user of outbox-console can name: no internal type leaks out, and public internal types say "Not API". */
class PublicSurfaceTest {

    private static final String[] PACKAGES = {"dev.outboxkit.console"};

    @Test
    void noPublicSignatureNamesAnInternalType() {
        assertThat(PublicSurface.leaks(Console.class, PACKAGES)).isEmpty();
    }

    @Test
    void publicInternalTypesSayTheyAreNotApi() {
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("src/main/java"))).isEmpty();
    }
}
