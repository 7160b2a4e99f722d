package dev.outboxkit.relay;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.spi.Checks;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The headers of {@link dev.outboxkit.core.RecordFormat#CLOUDEVENTS} records: the CloudEvents 1.0 Kafka protocol binding, binary mode
 * (every attribute a {@code ce_} header, the data the record value, {@code content-type} its media type).
 *
 * <table>
 *   <caption>attribute ← outbox column</caption>
 *   <tr><td>{@code ce_specversion}</td><td>{@code 1.0}</td></tr>
 *   <tr><td>{@code ce_id}</td><td>{@code id} (lower-case UUID)</td></tr>
 *   <tr><td>{@code ce_source}</td><td>the route's source template, {@code ${aggregateType}} and {@code ${eventType}} filled in</td></tr>
 *   <tr><td>{@code ce_type}</td><td>{@code event_type}</td></tr>
 *   <tr><td>{@code ce_time}</td><td>{@code created_at}, RFC 3339 UTC with six fractional digits (as {@code createdAt})</td></tr>
 *   <tr><td>{@code ce_subject}</td><td>{@code aggregate_id}: the entity the event is about, also the record key</td></tr>
 *   <tr><td>{@code ce_aggregatetype}</td><td>{@code aggregate_type} (an extension attribute)</td></tr>
 *   <tr><td>{@code content-type}</td><td>{@code application/json} for a JSON event (jsonb), a binary event's own
 *   content type</td></tr>
 * </table>
 */
public final class CloudEventsHeaders {

    public static final String SPEC_VERSION = "ce_specversion";
    public static final String ID = "ce_id";
    public static final String SOURCE = "ce_source";
    public static final String TYPE = "ce_type";
    public static final String TIME = "ce_time";
    public static final String SUBJECT = "ce_subject";
    /** Extension attribute {@code aggregatetype}: the aggregate's kind, which the other attributes do not carry. */
    public static final String AGGREGATE_TYPE = "ce_aggregatetype";
    /** The binding's name for {@code datacontenttype} in binary mode. */
    public static final String CONTENT_TYPE = "content-type";

    public static final String SPEC_VERSION_1_0 = "1.0";
    public static final String JSON = "application/json";

    /** The headers this format sets; a row's own headers may not reuse them. */
    public static final Set<String> RESERVED = Set.of(SPEC_VERSION, ID, SOURCE, TYPE, TIME, SUBJECT, AGGREGATE_TYPE,
            CONTENT_TYPE, "ce_datacontenttype");

    private static final String PREFIX = "ce_";

    private CloudEventsHeaders() {
    }

    /** The format's headers of {@code event}, in the order above. */
    static void add(RecordHeaders headers, OutboxEvent event, String source) {
        headers.add(SPEC_VERSION, utf8(SPEC_VERSION_1_0));
        headers.add(ID, utf8(event.id().toString()));
        headers.add(SOURCE, utf8(source));
        headers.add(TYPE, utf8(event.eventType()));
        headers.add(TIME, utf8(KafkaRecords.formatCreatedAt(event.createdAt())));
        headers.add(SUBJECT, utf8(event.aggregateId()));
        headers.add(AGGREGATE_TYPE, utf8(event.aggregateType()));
        headers.add(CONTENT_TYPE, utf8(event.isBinary() ? event.contentType() : JSON));
    }

    /**
     * Null when a row may carry header {@code name} in a CloudEvents record, else why not. Beyond
     * {@link HeaderNames#problem}: not one of {@link #RESERVED}, and a {@code ce_} header must be a legal extension
     * attribute (lower-case ASCII letters and digits after the prefix), since every CloudEvents reader takes it for one.
     */
    static String problem(String name) {
        if (RESERVED.contains(name)) {
            return "header '" + name + "' is set by the CloudEvents record format (reserved: " + String.join(", ",
                    new java.util.TreeSet<>(RESERVED)) + "); choose another name";
        }
        if (name.startsWith(PREFIX)) {
            String attribute = name.substring(PREFIX.length());
            if (attribute.isEmpty() || !attribute.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
                return "header '" + Checks.printable(name) + "' would be read as a CloudEvents attribute, and '"
                        + Checks.printable(attribute) + "' is not a legal attribute name (lower-case ASCII letters "
                        + "and digits only); rename it, or drop the 'ce_' prefix";
            }
        }
        return null;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
