package dev.outboxkit.runtime;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.utils.ByteBufferOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for the relays.
 *
 * <p>Makes an idle producer ready to publish at once, without sending a record: what a relay that waits to take work
 * over (the CDC relay's standby) does while it waits, so its first records after a takeover do not pay for it.
 * A producer that has never published pays on its first records for what it does only once: the codec's classes
 * and native library are loaded on the first batch, the topic's metadata is fetched by the first send to it
 * (blocking that send), and so on; those records wait far longer for their acknowledgements than later ones.
 */
public final class ProducerWarmup {

    private static final Logger log = LoggerFactory.getLogger(ProducerWarmup.class);

    /** The record batch format the producer writes (magic v2). */
    private static final byte MAGIC = 2;

    /**
     * Classes of the producer's sending path that nothing before the first send loads: the batch, the record format,
     * the produce request and response (each first loaded, linked and initialised on that send, on the sending thread
     * or on Kafka's I/O thread). Internal to kafka-clients: a name a later version dropped is skipped.
     */
    private static final List<String> SEND_PATH = List.of(
            "org.apache.kafka.clients.producer.internals.ProducerBatch",
            "org.apache.kafka.clients.producer.internals.ProducerBatch$Thunk",
            "org.apache.kafka.clients.producer.internals.ProducerBatch$FinalState",
            "org.apache.kafka.clients.producer.internals.FutureRecordMetadata",
            "org.apache.kafka.clients.producer.internals.ProduceRequestResult",
            "org.apache.kafka.clients.producer.internals.RecordAccumulator$RecordAppendResult",
            "org.apache.kafka.clients.producer.internals.RecordAccumulator$ReadyCheckResult",
            "org.apache.kafka.clients.producer.internals.BuiltInPartitioner$StickyPartitionInfo",
            "org.apache.kafka.common.record.internal.MemoryRecordsBuilder",
            "org.apache.kafka.common.record.internal.MemoryRecords",
            "org.apache.kafka.common.record.internal.DefaultRecord",
            "org.apache.kafka.common.record.internal.DefaultRecordBatch",
            "org.apache.kafka.common.requests.ProduceRequest",
            "org.apache.kafka.common.requests.ProduceRequest$Builder",
            "org.apache.kafka.common.requests.ProduceResponse",
            "org.apache.kafka.common.requests.ProduceResponse$PartitionResponse",
            "org.apache.kafka.common.message.ProduceRequestData",
            "org.apache.kafka.common.message.ProduceRequestData$TopicProduceData",
            "org.apache.kafka.common.message.ProduceRequestData$TopicProduceDataCollection",
            "org.apache.kafka.common.message.ProduceRequestData$PartitionProduceData",
            "org.apache.kafka.common.message.ProduceResponseData",
            "org.apache.kafka.common.message.ProduceResponseData$TopicProduceResponse",
            "org.apache.kafka.common.message.ProduceResponseData$TopicProduceResponseCollection",
            "org.apache.kafka.common.message.ProduceResponseData$PartitionProduceResponse");

    private ProducerWarmup() {
    }

    /**
     * Loads and initialises the classes of the producer's sending path ({@link #SEND_PATH}) and {@code more} (the
     * caller's own), which the first send would otherwise load while records wait. Runs no code of theirs but static
     * initialisers; returns how many were loaded.
     */
    public static int classes(Collection<Class<?>> more) {
        int loaded = 0;
        ClassLoader loader = Producer.class.getClassLoader();
        for (String name : SEND_PATH) {
            try {
                Class.forName(name, true, loader);
                loaded++;
            } catch (ClassNotFoundException | LinkageError e) {
                log.debug("producer warm-up: no class {} ({})", name, e.toString());
            }
        }
        for (Class<?> type : more) {
            try {
                Class.forName(type.getName(), true, type.getClassLoader());
                loaded++;
            } catch (ClassNotFoundException | LinkageError e) {
                log.debug("producer warm-up: class {} not initialised ({})", type.getName(), e.toString());
            }
        }
        return loaded;
    }

    /**
     * Compresses a small buffer locally with the producer's {@code compression.type} (nothing is sent): loads the
     * codec's classes and native library, which the first batch would otherwise load on the sending path.
     */
    public static void compression(Map<String, ?> producerConfig) {
        Object configured = producerConfig.get(ProducerConfig.COMPRESSION_TYPE_CONFIG);
        String type = configured == null ? "none" : configured.toString().trim();
        if (type.isEmpty() || type.equals("none")) {
            return;
        }
        try (ByteBufferOutputStream buffer = new ByteBufferOutputStream(4096);
             OutputStream out = Compression.of(type).build().wrapForOutput(buffer, MAGIC)) {
            out.write(new byte[1024]);
        } catch (IOException | RuntimeException | LinkageError e) {
            log.debug("could not warm compression {} ahead of the first batch: {}", type, e.toString());
        }
    }

    /**
     * Fetches (or refreshes) the metadata of {@code topics} in {@code producer}: the first send to a topic otherwise
     * blocks on that fetch. Blocks up to the producer's {@code max.block.ms} for a topic the brokers do not know (the
     * producer may have it created, as its first send would); call it on a thread that may wait. Nothing is sent.
     */
    public static void metadata(Producer<?, ?> producer, Collection<String> topics) {
        for (String topic : topics) {
            try {
                producer.partitionsFor(topic);
            } catch (RuntimeException e) {
                log.debug("no metadata for topic {} ahead of the first send: {}", topic, e.toString());
            }
        }
    }
}
