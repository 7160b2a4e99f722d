package dev.outboxkit.spring.test;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.PublicSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What a user of outbox-spring-boot-test can name: OutboxEvents and the annotation, nothing internal. */
class PublicSurfaceTest {

    @Test
    void noPublicSignatureNamesAnInternalType() {
        assertThat(PublicSurface.leaks(OutboxEvents.class, "dev.outboxkit.spring.test")).isEmpty();
    }

    @Test
    void publicInternalTypesSayTheyAreNotApi() {
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("src/main/java"))).isEmpty();
    }
}
