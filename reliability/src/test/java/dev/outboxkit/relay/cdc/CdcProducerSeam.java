package dev.outboxkit.relay.cdc;

import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;

/** Tests outside relay-debezium: reaches the builder's package-private producer seam (test code only, same package). */
public final class CdcProducerSeam {

    private CdcProducerSeam() {
    }

    public static CdcRelay.Builder producerFactory(CdcRelay.Builder builder,
                                                   Function<Map<String, Object>, Producer<byte[], byte[]>> factory) {
        return builder.producerFactory(factory);
    }
}
