package dev.outboxkit.relay;

import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.RecordFormat;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.core.Topics;
import dev.outboxkit.core.spi.Checks;
import dev.outboxkit.core.spi.TraceContext;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The one mapping from an outbox row to a Kafka record. Both relays call it, so a record is
 * byte-identical whichever relay published it: topic from the row or the route, key = aggregate
 * id, value = payload (a JSON event's text as UTF-8, a binary event's bytes unchanged), headers id,
 * eventType, aggregateType, createdAt, {@code content-type} for a binary event only (or, when the route says
 * {@link RecordFormat#CLOUDEVENTS}, the {@link CloudEventsHeaders}, whose {@code content-type} is always there),
 * then the row's headers.
 *
 * <p>A relay that traces gives the record its publish span's context
 * ({@link #toRecord(OutboxEvent, Map)}): the record's {@code traceparent} and {@code tracestate}
 * are then the span's, everything else stays the same to the byte.
 */
public final class KafkaRecords {

    /** createdAt is always written with six fractional digits, so both relays agree to the byte. */
    public static final DateTimeFormatter CREATED_AT_FORMAT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    /** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z: the years the fast createdAt path formats itself. */
    private static final long FAST_FROM = -62_167_219_200L;
    private static final long FAST_UNTIL = 253_402_300_800L;

    /** The W3C trace context headers (https://www.w3.org/TR/trace-context/). */
    public static final String TRACEPARENT = TraceContext.TRACEPARENT;
    public static final String TRACESTATE = TraceContext.TRACESTATE;
    private static final String[] TRACE_CONTEXT = {TRACEPARENT, TRACESTATE};

    private final TopicRoute route;
    /** The last topic found legal: relays send long runs to one topic, so the check runs once per run. */
    private volatile String lastLegalTopic;
    private volatile String lastLegalSource;

    public KafkaRecords(TopicRoute route) {
        this.route = route;
    }

    public TopicRoute route() {
        return route;
    }

    /**
     * The record for {@code event}.
     *
     * @throws InvalidEventException when the event can never be published as it is (illegal
     *                               topic, a header that reuses a reserved name): park it
     */
    public ProducerRecord<byte[], byte[]> toRecord(OutboxEvent event) {
        return build(event, null);
    }

    /**
     * The record for {@code event}, carrying {@code traceContext}'s {@code traceparent} and
     * {@code tracestate} instead of the row's: each in the place the row's header had, appended
     * when the row had none, left out when {@code traceContext} has none.
     *
     * @throws InvalidEventException as {@link #toRecord(OutboxEvent)}
     */
    public ProducerRecord<byte[], byte[]> toRecord(OutboxEvent event, Map<String, String> traceContext) {
        return build(event, traceContext);
    }

    private ProducerRecord<byte[], byte[]> build(OutboxEvent event, Map<String, String> traceContext) {
        String topic = route.topicFor(event);
        if (!topic.equals(lastLegalTopic)) {
            lastLegalTopic = Topics.requireLegal(topic);
        }
        RecordHeaders headers = new RecordHeaders();
        boolean cloudEvents = route.format() == RecordFormat.CLOUDEVENTS;
        boolean binary = event.isBinary();
        if (cloudEvents) {
            CloudEventsHeaders.add(headers, event, legalSource(event));
        } else {
            headers.add(HeaderNames.ID, utf8(event.id().toString()));
            headers.add(HeaderNames.EVENT_TYPE, utf8(event.eventType()));
            headers.add(HeaderNames.AGGREGATE_TYPE, utf8(event.aggregateType()));
            headers.add(HeaderNames.CREATED_AT, utf8(formatCreatedAt(event.createdAt())));
            if (binary) {
                headers.add(HeaderNames.CONTENT_TYPE, utf8(event.contentType()));
            }
        }
        for (Map.Entry<String, String> header : event.headers().entrySet()) {
            String name = header.getKey();
            String problem = HeaderNames.problem(name);
            if (problem == null && cloudEvents) {
                problem = CloudEventsHeaders.problem(name);
            }
            if (problem == null && binary && name.equalsIgnoreCase(HeaderNames.CONTENT_TYPE)) {
                problem = "a binary event carries its content type in content_type; it may not have a header '"
                        + name + "' as well";
            }
            if (problem != null) {
                throw new InvalidEventException("event " + event.id() + ": " + problem);
            }
            String value = header.getValue();
            if (traceContext != null && (name.equals(TRACEPARENT) || name.equals(TRACESTATE))) {
                value = traceContext.get(name);
                if (value == null) {
                    continue;
                }
            }
            headers.add(name, utf8(value));
        }
        if (traceContext != null) {
            for (String name : TRACE_CONTEXT) {
                String value = traceContext.get(name);
                if (value != null && !event.headers().containsKey(name)) {
                    headers.add(name, utf8(value));
                }
            }
        }
        return new ProducerRecord<>(topic, null, null, utf8(event.aggregateId()), event.value(), headers);
    }

    /** The event's ce_source, checked like its topic: once per run of equal sources. */
    private String legalSource(OutboxEvent event) {
        String source = route.sourceFor(event);
        if (!source.equals(lastLegalSource)) {
            String problem = Checks.uriProblem(source);
            if (problem != null) {
                throw new InvalidEventException("event " + event.id() + ": its CloudEvents source '"
                        + Checks.printable(source) + "' is not a URI reference (" + problem + ")");
            }
            lastLegalSource = source;
        }
        return source;
    }

    /**
     * {@link #CREATED_AT_FORMAT} applied to {@code createdAt}. For years 0000 to 9999 it writes the
     * characters itself (the formatter costs about a microsecond per event, a visible share of a
     * relay's CPU); the output is the same character for character.
     */
    public static String formatCreatedAt(Instant createdAt) {
        long seconds = createdAt.getEpochSecond();
        if (seconds < FAST_FROM || seconds >= FAST_UNTIL) {
            return CREATED_AT_FORMAT.format(createdAt);
        }
        LocalDateTime t = LocalDateTime.ofEpochSecond(seconds, createdAt.getNano(), ZoneOffset.UTC);
        char[] out = new char[27];
        digits(out, 0, t.getYear(), 4);
        out[4] = '-';
        digits(out, 5, t.getMonthValue(), 2);
        out[7] = '-';
        digits(out, 8, t.getDayOfMonth(), 2);
        out[10] = 'T';
        digits(out, 11, t.getHour(), 2);
        out[13] = ':';
        digits(out, 14, t.getMinute(), 2);
        out[16] = ':';
        digits(out, 17, t.getSecond(), 2);
        out[19] = '.';
        digits(out, 20, createdAt.getNano() / 1000, 6);
        out[26] = 'Z';
        return new String(out);
    }

    private static void digits(char[] out, int at, int value, int width) {
        for (int i = at + width - 1; i >= at; i--) {
            out[i] = (char) ('0' + value % 10);
            value /= 10;
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
