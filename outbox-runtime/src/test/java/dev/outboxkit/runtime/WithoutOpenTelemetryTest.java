package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

/**
 * Runs the tracing seam as an application without OpenTelemetry would: in a class loader that
 * refuses every {@code io.opentelemetry} class and loads outboxkit's own classes itself.
 */
class WithoutOpenTelemetryTest {

    /** Child-first for outboxkit's classes; io.opentelemetry is not there (each request is recorded). */
    static final class NoOpenTelemetry extends ClassLoader {
        final Set<String> refused = ConcurrentHashMap.newKeySet();

        NoOpenTelemetry() {
            super(WithoutOpenTelemetryTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("io.opentelemetry.")) {
                refused.add(name);
                throw new ClassNotFoundException(name + " (this loader has no OpenTelemetry)");
            }
            if (!name.startsWith("dev.outboxkit.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        if (in == null) {
                            throw new ClassNotFoundException(name);
                        }
                        byte[] bytes = in.readAllBytes();
                        c = defineClass(name, bytes, 0, bytes.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    /** What an application without OpenTelemetry does; run inside {@link NoOpenTelemetry}. */
    public static final class Scenario implements Supplier<Object> {
        @Override
        public Object get() {
            OutboxEvent event = OutboxEvent.fromRow(UUID.randomUUID(), "account", "acc-1", "Opened", null, "{}",
                    "{\"traceparent\": \"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}", Instant.now());
            TracedRecords records = new TracedRecords(TopicRoute.defaultRoute(), Tracing.OFF);
            TracedRecords.Traced t = records.toRecord(event);
            t.span().end(null, null);
            ProducerRecord<byte[], byte[]> plain = new KafkaRecords(TopicRoute.defaultRoute()).toRecord(event);
            return List.of(Tracing.openTelemetryPresent(), Tracing.currentContextHeaders().isEmpty(),
                    headers(t.record()).equals(headers(plain)),
                    Tracing.OFF.startProcess(null, "g", null) == ProcessSpan.NONE,
                    Scenario.class.getClassLoader().getClass().getName());
        }
    }

    @Test
    void theSeamWorksAndLoadsNothingOfOpenTelemetryWhenItIsAbsent() throws Exception {
        NoOpenTelemetry loader = new NoOpenTelemetry();
        @SuppressWarnings("unchecked")
        Supplier<Object> scenario = (Supplier<Object>) loader.loadClass(Scenario.class.getName())
                .getDeclaredConstructor().newInstance();

        assertThat(scenario.get()).isEqualTo(List.of(false, true, true, true, NoOpenTelemetry.class.getName()));
        // only the presence check asked, and it was told no
        assertThat(loader.refused).containsExactly("io.opentelemetry.api.trace.Span");
    }

    /** The record's headers as name=value, in order (outboxkit and Kafka classes only). */
    static List<String> headers(ProducerRecord<byte[], byte[]> r) {
        List<String> out = new ArrayList<>();
        for (Header h : r.headers()) {
            out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
        }
        return out;
    }
}
