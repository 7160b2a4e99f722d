package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.TestDatabase;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The Spring Modulith peer (module {@code benchmarks/peer-modulith}) running in this JVM, in a class loader of its
 * own: its Spring Boot class path, listed in the peer's {@code classpath.txt}, never meets the benchmarks' (the
 * platform class loader is its parent). Every call runs with that loader as the thread's context class loader,
 * as Spring and the Kafka client expect. One instance is one started application; {@link #close()} stops it.
 */
public final class ModulithPeer implements AutoCloseable {

    private static final String PEER = "dev.outboxkit.benchmarks.peer.modulith.Peer";
    private static final String CLASSPATH = "dev/outboxkit/benchmarks/peer/modulith/classpath.txt";

    private final ClassLoader loader;
    private final Object peer;
    private final Map<String, Method> methods = new LinkedHashMap<>();

    private ModulithPeer(ClassLoader loader, Object peer) {
        this.loader = loader;
        this.peer = peer;
        for (Method m : peer.getClass().getMethods()) {
            methods.putIfAbsent(m.getName(), m);
        }
    }

    /** Starts the peer application on {@code db}, publishing to {@code topic} on {@code bootstrap}. */
    public static ModulithPeer start(TestDatabase db, String bootstrap, String topic) throws Exception {
        return start(db.jdbcUrl(), db.user(), db.password(), bootstrap, topic);
    }

    public static ModulithPeer start(String jdbcUrl, String user, String password, String bootstrap, String topic)
            throws Exception {
        ClassLoader loader = classLoader();
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("spring.datasource.url", jdbcUrl);
        properties.put("spring.datasource.username", user);
        properties.put("spring.datasource.password", password);
        properties.put("spring.kafka.bootstrap-servers", bootstrap);
        properties.put("peer.topic", topic);
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            Object peer = loader.loadClass(PEER).getMethod("start", Map.class).invoke(null, properties);
            return new ModulithPeer(loader, peer);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("the Spring Modulith peer did not start: " + e.getCause(), e.getCause());
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** A new loader for the peer: its jar (or classes folder) and the class path it was built with. */
    static ClassLoader classLoader() throws IOException {
        URL listing = ModulithPeer.class.getClassLoader().getResource(CLASSPATH);
        if (listing == null) {
            throw new IllegalStateException(CLASSPATH + " is not on the class path: build the peer first"
                    + " (./mvnw -pl benchmarks -am package builds benchmarks/peer-modulith)");
        }
        String text;
        try (InputStream in = listing.openStream()) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
        List<URL> urls = new ArrayList<>();
        urls.add(root(listing));
        for (String entry : text.split(java.io.File.pathSeparator)) {
            if (!entry.isBlank()) {
                urls.add(Path.of(entry).toUri().toURL());
            }
        }
        return new URLClassLoader("modulith-peer", urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
    }

    /** The jar or folder that holds {@code listing}. */
    private static URL root(URL listing) throws MalformedURLException {
        String url = listing.toString();
        if (url.startsWith("jar:")) {
            return new URL(url.substring("jar:".length(), url.indexOf("!/")));
        }
        return new URL(url.substring(0, url.length() - CLASSPATH.length()));
    }

    /** One transaction publishing one event. */
    public void publish(UUID id, String aggregateId, long n, String payload) throws Exception {
        call("publish", id.toString(), aggregateId, n, payload);
    }

    /** One transfer (two account updates) with its event, or without one when {@code id} is null. */
    public void transfer(int from, int to, long amount, UUID id, String aggregateId, long n, String payload)
            throws Exception {
        call("transfer", from, to, amount, id == null ? null : id.toString(), aggregateId, n, payload);
    }

    /** One transaction with a {@code crash_committed} row and its event. */
    public void publishRecorded(UUID id, String aggregateId, long n, String payload) throws Exception {
        call("publishRecorded", id.toString(), aggregateId, n, payload);
    }

    /** {@code listener_id}, {@code event_type}, {@code status} and {@code completion_attempts} of a new registry row. */
    @SuppressWarnings("unchecked")
    public List<String> registryRow() throws Exception {
        return (List<String>) call("registryRow");
    }

    /** {@code serialized_event} of this event, by the peer's own serializer. */
    public String serializedEvent(UUID id, String aggregateId, long n, String payload) throws Exception {
        return (String) call("serializedEvent", id.toString(), aggregateId, n, payload);
    }

    /** Resubmits every incomplete publication (returns once they are handed to the listener's executor). */
    public void resubmitIncomplete() throws Exception {
        call("resubmitIncomplete");
    }

    /** Deletes completed publications. */
    public void purgeCompleted() throws Exception {
        call("purgeCompleted");
    }

    private Object call(String name, Object... args) throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return methods.get(name).invoke(peer, args);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    @Override
    public void close() throws Exception {
        call("close");
        if (loader instanceof URLClassLoader closable) {
            closable.close();
        }
    }
}
