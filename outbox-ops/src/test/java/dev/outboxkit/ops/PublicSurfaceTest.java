package dev.outboxkit.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.ops.reconcile.Reconciler;
import dev.outboxkit.testkit.PublicSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What a user of outbox-ops can name: no internal type leaks out, and public internal types say "Not API". */
class PublicSurfaceTest {

    /** The module's packages (their internal subpackages included). */
    private static final String[] PACKAGES = {"dev.outboxkit.ops"};

    @Test
    void noPublicSignatureNamesAnInternalType() {
        assertThat(PublicSurface.leaks(Reconciler.class, PACKAGES)).isEmpty();
    }

    @Test
    void publicInternalTypesSayTheyAreNotApi() {
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("src/main/java"))).isEmpty();
    }
}
