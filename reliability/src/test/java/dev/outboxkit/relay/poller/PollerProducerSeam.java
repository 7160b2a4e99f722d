package dev.outboxkit.relay.poller;

import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;

/** Tests outside relay-poller: reaches the builder's package-private producer seam (test code only, same package). */
public final class PollerProducerSeam {

    private PollerProducerSeam() {
    }

    public static PollingRelay.Builder producerFactory(PollingRelay.Builder builder,
                                                       Function<Map<String, Object>, Producer<byte[], byte[]>> factory) {
        return builder.producerFactory(factory);
    }
}
