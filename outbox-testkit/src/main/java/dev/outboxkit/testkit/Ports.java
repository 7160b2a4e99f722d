package dev.outboxkit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/** Loopback ports for servers a test starts itself (a broker behind a proxy, a restarted server). */
public final class Ports {

    /** Every port handed out in this JVM: a caller may not have bound it yet, so it must not be handed out twice. */
    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    private Ports() {
    }

    /**
     * A loopback port that was free a moment ago and that this JVM has not handed out before (two ports asked for in a
     * row, before either is bound, such as a broker's client and replication listeners, once came back equal).
     * Another process may still take it before the caller binds it; that is rare.
     */
    public static synchronized int free() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(false);
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                port = s.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException("no free loopback port: " + e.getMessage(), e);
            }
            if (HANDED_OUT.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no loopback port that this JVM has not handed out already, after 100 tries");
    }
}
