package dev.outboxkit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Loopback ports for servers a test starts itself (a broker behind a proxy, a restarted server). */
public final class Ports {

    private Ports() {
    }

    /**
     * A loopback port that was free a moment ago. Another process may take it before the caller
     * binds it; the system hands out ephemeral ports in rotation, so in practice that is rare.
     */
    public static int free() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port: " + e.getMessage(), e);
        }
    }
}
