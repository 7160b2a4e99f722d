package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.PublicSurface;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What a user of outbox-writer can name: no internal type leaks out, and public internal types say "Not API". */
class PublicSurfaceTest {

    /** The module's packages (their internal subpackages included). */
    private static final String[] PACKAGES = {"dev.outboxkit.writer"};

    @Test
    void noPublicSignatureNamesAnInternalType() {
        assertThat(PublicSurface.leaks(OutboxWriter.class, PACKAGES)).isEmpty();
    }

    /**
     * What a user types, pinned: a new public type is a decision (issue 27: 20 before the one idempotency engine,
     * of them 11 for idempotency; the step API's claim handle and the two work interfaces went; PayloadSerializer came
     * with one JSON mapper, issue 29).
     */
    @Test
    void thePublicTypesAreTheseEighteen() throws IOException {
        List<String> types;
        try (Stream<Path> files = Files.list(Path.of("src/main/java/dev/outboxkit/writer"))) {
            types = files.filter(f -> f.toString().endsWith(".java") && !f.endsWith("package-info.java"))
                    .filter(PublicSurfaceTest::declaresPublicType)
                    .map(f -> f.getFileName().toString().replace(".java", "")).sorted().toList();
        }
        assertThat(types).containsExactly("AutoCommitEnabledException", "CommitOutcomeUnknownException", "IdempotencyException",
                "IdempotencyKeyExpiredException", "IdempotencyKeys", "IdempotentResult", "KeyReusedWithDifferentRequestException",
                "OutboxMessage", "OutboxTransaction", "OutboxWriter", "PayloadSerializer", "PayloadTooLargeException", "RequestInProgressException",
                "StoredResponse", "TerminalFailureException", "TransactionWork", "WorkFailedException", "WriteMode");
    }

    private static boolean declaresPublicType(Path source) {
        try {
            return Files.readString(source).lines().anyMatch(l -> l.matches("public (final |abstract )?(class|interface|record|enum) .*"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void publicInternalTypesSayTheyAreNotApi() {
        assertThat(PublicSurface.internalTypesWithoutNotApiNote(Path.of("src/main/java"))).isEmpty();
    }
}
