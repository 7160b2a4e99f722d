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

    /** Ports below this are left alone: well-known and registered services live there. */
    private static final int LOWEST = 10_000;

    /**
     * A loopback port for a server that stops and starts again on the same port, chosen below the kernel's range of
     * ephemeral ports ({@code /proc/sys/net/ipv4/ip_local_port_range}, from 32768 by default): a port from
     * {@link #free()} is an ephemeral one, which any process's outgoing connection can take while the server is
     * down (on a busy machine it happens). Free a moment ago and not handed out before in this JVM; another server
     * can still take it before the caller binds it, which is rare. {@link #free()} where the ephemeral range starts
     * too low to leave room.
     */
    static synchronized int freeForRestarts() {
        int ephemeralLow = ephemeralRangeStart();
        if (ephemeralLow - LOWEST < 1_000) {
            return free();
        }
        java.util.Random random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = LOWEST + random.nextInt(ephemeralLow - LOWEST);
            if (HANDED_OUT.contains(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(false);
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            } catch (IOException taken) {
                continue;
            }
            HANDED_OUT.add(port);
            return port;
        }
        throw new IllegalStateException("no free loopback port between " + LOWEST + " and " + ephemeralLow
                + " after 200 tries");
    }

    /** The first ephemeral port of this machine (Linux), or 32768 (the Linux default) where that cannot be read. */
    private static int ephemeralRangeStart() {
        try {
            // not Files.readString: on this procfs file (size 0) it returned only the first character with Java 17
            String range = java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .get(0);
            return Integer.parseInt(range.trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
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

    /** {@code port} when it is 0 (pick a free one) or a TCP port; else an error naming {@code what}. */
    static int check(String what, int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(what + " must be between 0 and 65535, got " + port);
        }
        return port;
    }
}
