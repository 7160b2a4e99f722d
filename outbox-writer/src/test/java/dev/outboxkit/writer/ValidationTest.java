package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Bad input is refused with a message that says what and how to fix, before the database sees it. */
@ExtendWith(OutboxTestkitExtension.class)
class ValidationTest {

    private static OutboxMessage.Builder ok() {
        return OutboxMessage.builder("account", "acc-1", "Opened").payloadJson("{}");
    }

    @Test
    void blankFieldsAreRefused() {
        assertThatThrownBy(() -> OutboxMessage.builder(" ", "a", "b").payloadJson("{}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageStartingWith("aggregateType must not be blank");
        assertThatThrownBy(() -> OutboxMessage.builder("a", "", "b").payloadJson("{}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageStartingWith("aggregateId must not be blank");
        assertThatThrownBy(() -> OutboxMessage.builder("a", "b", null).payloadJson("{}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageStartingWith("eventType must not be blank");
        assertThatThrownBy(() -> OutboxMessage.builder("a", "b\u0000", "c").payloadJson("{}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("U+0000");
    }

    @Test
    void payloadsMustBeOneValidJsonValueThatJsonbAccepts() {
        assertThatThrownBy(() -> ok().payloadJson("{\"a\": }").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("is not valid JSON")
                .hasMessageContaining("line 1, column");
        assertThatThrownBy(() -> ok().payloadJson("{} {}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("more after the first JSON value");
        assertThatThrownBy(() -> ok().payloadJson("{\"a\": [1, 2}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("is not valid JSON");
        assertThatThrownBy(() -> ok().payloadJson("  ").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("is empty");
        assertThatThrownBy(() -> ok().payloadJson("{\"a\": \"\\u0000\"}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("U+0000");
        assertThatThrownBy(() -> ok().payloadJson("{\"a\": \"\\ud800\"}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("unpaired UTF-16 surrogate");
        assertThatThrownBy(() -> OutboxMessage.builder("a", "b", "c").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("has no payload");
        assertThatThrownBy(() -> ok().payloadJson(null).build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("is null; for a JSON null use payloadJson(\"null\")");
        assertThat(ok().payload(Map.of("a", 1)).build().payloadJson()).as("the last payload wins").isNull();
        assertThatThrownBy(() -> OutboxMessage.builder("a", "b", "c").payload("{\"a\": 1}").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("use payloadJson(String)");
        ObjectNode node = JsonNodeFactory.instance.objectNode().put("bad", "x\u0000y");
        assertThatThrownBy(() -> OutboxMessage.builder("a", "b", "c").payload(node).build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("U+0000");
        // scalars and arrays are JSON values too
        assertThat(OutboxMessage.builder("a", "b", "c").payloadJson("42").build().payloadJson()).isEqualTo("42");
        assertThat(OutboxMessage.builder("a", "b", "c").payloadJson("[1, \"x\"]").build().payloadJson()).isEqualTo("[1, \"x\"]");
    }

    @Test
    void binaryPayloadsNeedAMediaTypeAndNoContentTypeHeader() {
        byte[] bytes = {1, 2, 3};
        OutboxMessage m = ok().payloadBytes(bytes, "application/x-protobuf; messageType=shop.Order").build();
        assertThat(m.payloadBytes()).isSameAs(bytes);
        assertThat(m.contentType()).isEqualTo("application/x-protobuf; messageType=shop.Order");
        assertThat(ok().payloadJson("{}").build().contentType()).isNull();
        assertThatThrownBy(() -> ok().payloadBytes(bytes, null).build()).isInstanceOf(InvalidEventException.class)
                .hasMessage("payloadBytes of event account/acc-1/Opened: a binary payload needs a content type such as "
                        + "application/x-protobuf or application/octet-stream");
        assertThatThrownBy(() -> ok().payloadBytes(bytes, "protobuf").build()).isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("content type 'protobuf' has no '/' between type and subtype")
                .hasMessageContaining("for example application/x-protobuf");
        assertThatThrownBy(() -> ok().payloadBytes(null, "application/x-protobuf").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("is null");
        assertThatThrownBy(() -> ok().payloadBytes(bytes, "application/x-protobuf").header("Content-Type", "x/y").build())
                .isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("second argument of payloadBytes(byte[], String)");
        // a later payload setter replaces the bytes and their content type
        OutboxMessage replaced = ok().payloadBytes(bytes, "application/x-protobuf").payloadJson("{}").build();
        assertThat(replaced.payloadBytes()).isNull();
        assertThat(replaced.contentType()).isNull();
    }

    @Test
    void headersMustBeLegalAndNotReserved() {
        assertThatThrownBy(() -> ok().header("id", "x").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("header 'id' is reserved by outboxkit");
        assertThatThrownBy(() -> ok().headers(Map.of("createdAt", "x")).build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> ok().header("bad name", "x").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("printable ASCII without spaces");
        assertThatThrownBy(() -> ok().header("", "x").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("must not be blank");
        assertThatThrownBy(() -> ok().header("tenant", null).build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("has no value");
        assertThatThrownBy(() -> ok().topic("no spaces allowed").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("has characters Kafka does not allow");
    }

    @Test
    void traceparentMustBeW3cFormatted() {
        String good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assertThat(ok().traceparent(good).build().headers()).containsEntry("traceparent", good);
        assertThat(ok().traceparent(null).build().headers()).doesNotContainKey("traceparent");
        assertThatThrownBy(() -> ok().traceparent("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("is not a W3C traceparent");
        assertThatThrownBy(() -> ok().traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("trace-id must not be all zeros");
        assertThatThrownBy(() -> ok().traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("parent-id must not be all zeros");
        assertThatThrownBy(() -> ok().traceparent("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("version ff");
        assertThatThrownBy(() -> ok().header("traceparent", "garbage").build())
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("is not a W3C traceparent");
        // a future version may carry more fields
        String future = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra";
        assertThat(ok().traceparent(future).build().headers()).containsEntry("traceparent", future);
    }

    @Test
    void writerRefusalsNeverReachTheDatabase(TestDatabase db) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        OutboxWriter writer = OutboxWriter.builder().maxPayloadBytes(1000).meterRegistry(registry).build();
        try (Connection c = db.connect()) {
            assertThatThrownBy(() -> writer.write(c, ok().build()))
                    .isInstanceOf(AutoCommitEnabledException.class).hasMessageContaining("setAutoCommit(false)");
            assertThatThrownBy(() -> writer.begin(c)).isInstanceOf(AutoCommitEnabledException.class);
            c.setAutoCommit(false);
            OutboxMessage large = ok().payloadJson("\"" + "é".repeat(500) + "\"").build();
            OutboxMessage fine = ok().build();
            // one bad event among good ones: none is written
            assertThatThrownBy(() -> writer.write(c, List.of(fine, large, fine)))
                    .isInstanceOf(PayloadTooLargeException.class)
                    .hasMessageContaining("is 1002 bytes of JSON; the limit is 1000 bytes (maxPayloadBytes")
                    .satisfies(e -> assertThat(((PayloadTooLargeException) e).size()).isEqualTo(1002));
            OutboxMessage unserialisable = OutboxMessage.builder("a", "b", "c").payload(new Object()).build();
            assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();
            assertThatThrownBy(() -> writer.write(c, fine, unserialisable))
                    .isInstanceOf(InvalidEventException.class).hasMessageContaining("could not be serialised");
            try (OutboxTransaction tx = writer.begin(c)) {
                tx.add(fine);
                assertThatThrownBy(() -> tx.add(large)).isInstanceOf(PayloadTooLargeException.class);
                assertThat(tx.pending()).isEqualTo(1);
                tx.commit();
            }
        }
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(1);
        assertThat(registry.get("outbox.writer.rejected").tag("reason", "payload_too_large").counter().count()).isEqualTo(2);
        assertThat(registry.get("outbox.writer.rejected").tag("reason", "autocommit").counter().count()).isEqualTo(2);
        assertThat(registry.get("outbox.writer.rejected").tag("reason", "invalid_event").counter().count()).isEqualTo(1);
    }

    @Test
    void objectPayloadsUseTheWritersObjectMapper(TestDatabase db) throws Exception {
        record Deposit(String account, long amount) {
        }
        OutboxWriter writer = OutboxWriter.builder().build();
        writer.inTransaction(db.dataSource(), (c, tx) -> tx.add(
                OutboxMessage.builder("account", "acc-1", "Deposited").payload(new Deposit("acc-1", 5)).build()));
        assertThat(db.strings("SELECT payload::text FROM outbox_event"))
                .containsExactly("{\"amount\": 5, \"account\": \"acc-1\"}");
    }

    @Test
    void builderSettingsAreValidatedByName() {
        assertThatThrownBy(() -> OutboxWriter.builder().schema("Public; drop").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema 'Public; drop' is not a legal identifier");
        assertThatThrownBy(() -> OutboxWriter.builder().maxPayloadBytes(0).build())
                .hasMessage("maxPayloadBytes must be at least 1, got 0");
        assertThatThrownBy(() -> OutboxWriter.builder().mode(null).build()).hasMessageContaining("mode must not be null");
        assertThatThrownBy(() -> OutboxWriter.builder().notifyChannel("bad-channel").build())
                .hasMessageContaining("notifyChannel 'bad-channel' is not a legal identifier");
        assertThatThrownBy(() -> IdempotencyKeys.builder().lease(java.time.Duration.ZERO).build())
                .hasMessageContaining("lease must be a positive duration");
        assertThatThrownBy(() -> IdempotencyKeys.builder().retention(java.time.Duration.ofSeconds(10)).build())
                .hasMessage("retention (PT10S) must be longer than lease (PT30S)");
        assertThatThrownBy(() -> IdempotencyKeys.builder().retention("", java.time.Duration.ofHours(1)))
                .hasMessageContaining("retention scope must not be blank");
        assertThatThrownBy(() -> IdempotencyKeys.builder().retryAfter(java.time.Duration.ofMillis(500)).build())
                .hasMessage("retryAfter must be from 1 s (Retry-After counts whole seconds) up to the lease (PT30S), got PT0.5S");
        assertThatThrownBy(() -> IdempotencyKeys.builder().retryAfter(java.time.Duration.ofMinutes(1)).build())
                .hasMessageContaining("up to the lease (PT30S), got PT1M");
        assertThat(IdempotencyKeys.builder().build().retryAfter()).isEqualTo(IdempotencyKeys.DEFAULT_RETRY_AFTER);
    }
}
