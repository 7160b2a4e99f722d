package dev.outboxkit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

class ValidationPropertiesTest {

    static final List<String> HOSTILE = List.of(
            "public; drop table x", "public\"; drop table x; --", "\"public\"", "pub lic", "Public", "1abc",
            "a-b", "a.b", "x'||pg_sleep(10)||'", "", "résumé", "a\u0000b", "a\nb", "select", "table",
            "a".repeat(64), "$1", "--", "/*", "x;", "ａｂｃ");

    @Test
    void hostileIdentifiersAreRefusedWithTheKeyInTheMessage() {
        for (String hostile : HOSTILE) {
            assertThatThrownBy(() -> Identifiers.requireValid("outbox.schema", hostile))
                    .as("'%s'", hostile)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("outbox.schema");
        }
    }

    @Test
    void legalIdentifiersAreQuoted() {
        assertThat(Identifiers.quote("schema", "outbox_2")).isEqualTo("\"outbox_2\"");
        assertThat(Identifiers.qualified("app", "outbox_event")).isEqualTo("\"app\".\"outbox_event\"");
    }

    @Property
    void anyAcceptedIdentifierIsSafeToQuote(@ForAll @StringLength(min = 1, max = 70) String candidate) {
        boolean accepted;
        try {
            Identifiers.requireValid("x", candidate);
            accepted = true;
        } catch (IllegalArgumentException e) {
            accepted = false;
        }
        if (accepted) {
            assertThat(candidate).matches("[a-z_][a-z0-9_]*").hasSizeLessThanOrEqualTo(63);
        }
    }

    @Property
    void legalTopicsAreAccepted(@ForAll("legalTopics") String topic) {
        assertThat(Topics.problem(topic)).isNull();
    }

    @Property
    void topicsWithAnIllegalCharacterAreRefused(@ForAll("legalTopics") String topic,
                                                @ForAll("illegalChars") char bad) {
        String withBad = topic.substring(0, topic.length() / 2) + bad + topic.substring(topic.length() / 2);
        assertThat(Topics.problem(withBad)).isNotNull();
    }

    @Test
    void topicLengthAndDotsAreChecked() {
        assertThat(Topics.problem("a".repeat(249))).isNull();
        assertThat(Topics.problem("a".repeat(250))).contains("at most 249");
        assertThat(Topics.problem(".")).isNotNull();
        assertThat(Topics.problem("..")).isNotNull();
        assertThat(Topics.problem("")).isNotNull();
        assertThat(Topics.problem(null)).isNotNull();
    }

    @Provide
    Arbitrary<String> legalTopics() {
        return Arbitraries.strings().withChars("abcXYZ0129._-").ofMinLength(3).ofMaxLength(249)
                .filter(s -> !s.equals("...") );
    }

    @Provide
    Arbitrary<Character> illegalChars() {
        return Arbitraries.of(' ', '/', '\\', ':', '*', '?', '"', '<', '>', '|', '\n', 'é', '$', '{', '}', ',');
    }

    @Test
    void instanceIdsArePrintableAsciiWithoutSpacesUpTo200() {
        assertThat(Identifiers.requireInstanceId("instanceId", "relay-1.host_a:9")).isEqualTo("relay-1.host_a:9");
        assertThat(Identifiers.requireInstanceId("instanceId", "x".repeat(200))).hasSize(200);
        for (String bad : new String[] {null, "", "has space", "tab\there", "new\nline", "résumé", "x".repeat(201), "\u007f"}) {
            assertThatThrownBy(() -> Identifiers.requireInstanceId("instanceId", bad)).as("'%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("instanceId must be 1 to 200 printable ASCII characters without spaces");
        }
        assertThatThrownBy(() -> Identifiers.requireInstanceId("instanceId", "a\nb")).hasMessageContaining("'a\\u000ab'");
    }

    @Test
    void secretsAreMasked() {
        assertThat(Secret.of("hunter2").toString()).isEqualTo("[hidden]");
        assertThat(Secret.maskUrl("jdbc:postgresql://h:5432/db?user=app&password=hunter2&ssl=true"))
                .isEqualTo("jdbc:postgresql://h:5432/db?user=app&password=[hidden]&ssl=true");
        assertThat(Secret.maskUrl("postgresql://app:hunter2@h/db")).isEqualTo("postgresql://app:[hidden]@h/db");
        assertThat(Secret.printable("sasl.jaas.config", "x required password=\"p\";")).isEqualTo("[hidden]");
        assertThat(Secret.printable("kafka.ssl.truststore.password", "p")).isEqualTo("[hidden]");
        assertThat(Secret.printable("jdbc-url", "jdbc:postgresql://h/db?password=p")).doesNotContain("=p");
    }
}
