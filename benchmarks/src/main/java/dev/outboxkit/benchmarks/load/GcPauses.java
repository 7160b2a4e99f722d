package dev.outboxkit.benchmarks.load;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The garbage collections of this JVM while a latency phase runs. In the benchmark the Kafka broker,
 * the writers, the relay and the consumer that sees the records share this JVM, so a pause stops all of them at once:
 * an artefact of the harness as far as the broker, writers and consumer are concerned. Each collection the JVM reports
 * (for G1: young and mixed pauses, full collections; not the remark and cleanup pauses of a concurrent cycle) is kept
 * with the {@link System#nanoTime()} at which it began.
 */
public final class GcPauses implements AutoCloseable {

    /** One collection: when it began (System.nanoTime) and how long it took, in ms. */
    public record Pause(long startNanos, long millis, String collector) {
    }

    private final List<Pause> pauses = new CopyOnWriteArrayList<>();
    private final List<NotificationEmitter> emitters = new ArrayList<>();
    private final NotificationListener listener = this::onNotification;

    private GcPauses() {
    }

    /** Starts listening to every collector of this JVM. */
    public static GcPauses start() {
        GcPauses gc = new GcPauses();
        for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (bean instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener(gc.listener, null, null);
                gc.emitters.add(emitter);
            }
        }
        return gc;
    }

    private void onNotification(Notification n, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
        long millis = info.getGcInfo().getDuration();
        // the notification comes after the collection ended: its start is that long before now
        pauses.add(new Pause(System.nanoTime() - millis * 1_000_000L, millis, info.getGcName()));
    }

    public List<Pause> pauses() {
        return List.copyOf(pauses);
    }

    @Override
    public void close() {
        for (NotificationEmitter emitter : emitters) {
            try {
                emitter.removeNotificationListener(listener);
            } catch (ListenerNotFoundException e) {
                // never added: nothing to remove
            }
        }
    }
}
