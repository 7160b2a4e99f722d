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

    /** outbox-core and outbox-runtime cannot use the testkit (the testkit builds on them), so their surfaces are checked here. */
    @Test
    void coreAndRuntimeLeakNoInternalTypeAndTheirNotApiTypesSaySo() {
        assertThat(PublicSurface.leaks(dev.outboxkit.core.OutboxEvent.class, "dev.outboxkit.core")).isEmpty();
        assertThat(PublicSurface.leaks(dev.outboxkit.relay.RelayOption.class, "dev.outboxkit.relay", "dev.outboxkit.runtime")).isEmpty();
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("..", "outbox-core", "src", "main", "java"))).isEmpty();
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("..", "outbox-runtime", "src", "main", "java"))).isEmpty();
    }

    @Test
    void publicInternalTypesSayTheyAreNotApi() {
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("src/main/java"))).isEmpty();
    }
}
