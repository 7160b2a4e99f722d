package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.PublicSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What a user of relay-poller can name: no internal type leaks out, and public internal types say "Not API". */
class PublicSurfaceTest {

    /** The module's packages (their internal subpackages included). */
    private static final String[] PACKAGES = {"dev.outboxkit.relay.poller"};

    @Test
    void noPublicSignatureNamesAnInternalType() {
        assertThat(PublicSurface.leaks(PollingRelay.class, PACKAGES)).isEmpty();
    }

    /** outbox-core cannot use the testkit (the testkit builds on it), so its surface is checked here. */
    @Test
    void outboxCoreLeaksNoInternalTypeAndItsPublicInternalTypesSayNotApi() {
        assertThat(PublicSurface.leaks(dev.outboxkit.core.RelayOption.class, "dev.outboxkit.core")).isEmpty();
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("..", "outbox-core", "src", "main", "java"))).isEmpty();
    }

    @Test
    void publicInternalTypesSayTheyAreNotApi() {
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("src/main/java"))).isEmpty();
    }
}
