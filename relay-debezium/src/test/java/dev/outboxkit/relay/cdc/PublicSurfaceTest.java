package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.PublicSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What a user of relay-debezium can name: no internal type leaks out, and public internal types say "Not API". */
class PublicSurfaceTest {

    /** The module's packages (their internal subpackages included). */
    private static final String[] PACKAGES = {"dev.outboxkit.relay.cdc"};

    @Test
    void noPublicSignatureNamesAnInternalType() {
        assertThat(PublicSurface.leaks(CdcRelay.class, PACKAGES)).isEmpty();
    }

    @Test
    void publicInternalTypesSayTheyAreNotApi() {
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("src/main/java"))).isEmpty();
    }
}
