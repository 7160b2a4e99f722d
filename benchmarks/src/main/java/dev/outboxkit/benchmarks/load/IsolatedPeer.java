package dev.outboxkit.benchmarks.load;

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

/**
 * A peer application (a module of {@code benchmarks/peer-*}) running in this JVM in a class loader of its own: its
 * Spring Boot class path, listed in the peer's {@code classpath.txt}, never meets the benchmarks' (the platform
 * class loader is its parent). The peer's entry class has a static {@code start(Map)} and JDK-typed methods; every
 * call runs with the peer's loader as the thread's context class loader, as Spring and the Kafka client expect.
 */
final class IsolatedPeer implements AutoCloseable {

    private final String label;
    private final ClassLoader loader;
    private final Object peer;
    private final Map<String, Method> methods = new LinkedHashMap<>();

    private IsolatedPeer(String label, ClassLoader loader, Object peer) {
        this.label = label;
        this.loader = loader;
        this.peer = peer;
        for (Method m : peer.getClass().getMethods()) {
            methods.putIfAbsent(m.getName(), m);
        }
    }

    /**
     * Starts {@code entryClass} (a class of the peer whose package folder holds {@code classpath.txt}) with the
     * Spring properties of a run: the database, the broker and {@code peer.topic}.
     */
    static IsolatedPeer start(String label, String entryClass, String jdbcUrl, String user, String password,
                              String bootstrap, String topic) throws Exception {
        ClassLoader loader = classLoader(label, entryClass);
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
            Object peer = loader.loadClass(entryClass).getMethod("start", Map.class).invoke(null, properties);
            return new IsolatedPeer(label, loader, peer);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException(label + " did not start: " + e.getCause(), e.getCause());
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** A new loader for the peer: its jar (or classes folder) and the class path it was built with. */
    static ClassLoader classLoader(String label, String entryClass) throws IOException {
        String listingPath = entryClass.substring(0, entryClass.lastIndexOf('.')).replace('.', '/') + "/classpath.txt";
        URL listing = IsolatedPeer.class.getClassLoader().getResource(listingPath);
        if (listing == null) {
            throw new IllegalStateException(listingPath + " is not on the class path: build " + label + " first"
                    + " (./mvnw -pl benchmarks -am package builds every benchmarks/peer-* module)");
        }
        String text;
        try (InputStream in = listing.openStream()) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
        List<URL> urls = new ArrayList<>();
        urls.add(root(listing, listingPath));
        for (String entry : text.split(java.io.File.pathSeparator)) {
            if (!entry.isBlank()) {
                urls.add(Path.of(entry).toUri().toURL());
            }
        }
        return new URLClassLoader(label, urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
    }

    /** The jar or folder that holds {@code listing}. */
    private static URL root(URL listing, String listingPath) throws MalformedURLException {
        String url = listing.toString();
        if (url.startsWith("jar:")) {
            return new URL(url.substring("jar:".length(), url.indexOf("!/")));
        }
        return new URL(url.substring(0, url.length() - listingPath.length()));
    }

    /** Calls the peer's public method {@code name} (one per name) with the peer's loader as context loader. */
    Object call(String name, Object... args) throws Exception {
        Method method = methods.get(name);
        if (method == null) {
            throw new IllegalArgumentException(label + " has no method " + name + "; it has " + methods.keySet());
        }
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return method.invoke(peer, args);
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
