package dev.outboxkit.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.RecordFormat;
import dev.outboxkit.core.TopicRoute;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How recordFormat and cloudEventsSource reach the route a relay publishes with, from code and from text. */
class RecordFormatOptionsTest {

    /** The smallest relay builder: the shared options only. */
    private static final class Builder extends RelayBuilder<Builder> {
        @Override
        protected List<RelayOption<?>> ownOptions() {
            return List.of();
        }

        TopicRoute published() {
            return routeWithFormat();
        }
    }

    @Test
    void outboxkitHeadersUnlessTheFormatSaysCloudEvents() {
        assertThat(new Builder().published()).isEqualTo(TopicRoute.defaultRoute());
        assertThat(new Builder().cloudEventsSource("/ignored").published().format())
                .as("a source alone changes nothing").isEqualTo(RecordFormat.OUTBOXKIT);
        TopicRoute ce = new Builder().route(TopicRoute.of("t")).recordFormat(RecordFormat.CLOUDEVENTS).published();
        assertThat(ce).isEqualTo(TopicRoute.of("t").withCloudEvents("/outbox/${aggregateType}"));
    }

    @Test
    void textOptionsAsTheCliAndSpringGiveThem() {
        TopicRoute ce = new Builder().options(Map.of("route", "orders.${eventType}", "record-format", "CloudEvents",
                "cloud-events-source", "https://orders.example.com/${aggregateType}")).published();
        assertThat(ce.template()).isEqualTo("orders.${eventType}");
        assertThat(ce.format()).isEqualTo(RecordFormat.CLOUDEVENTS);
        assertThat(ce.cloudEventsSource()).isEqualTo("https://orders.example.com/${aggregateType}");
        assertThatThrownBy(() -> new Builder().options(Map.of("cloud-events-source", "not a uri")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("cloudEventsSource: CloudEvents source template 'not a uri' is not a URI reference");
        assertThatThrownBy(() -> new Builder().options(Map.of("record-format", "xml")))
                .hasMessageContaining("OUTBOXKIT, CLOUDEVENTS");
    }

    @Test
    void aRouteGivenInCloudEventsFormatStaysSo() {
        TopicRoute given = TopicRoute.of("t").withCloudEvents("/mine");
        assertThat(new Builder().route(given).published()).isEqualTo(given);
        assertThat(new Builder().route(given).recordFormat(RecordFormat.CLOUDEVENTS).cloudEventsSource("/option")
                .published().cloudEventsSource()).as("set as options, the options decide").isEqualTo("/option");
    }
}
