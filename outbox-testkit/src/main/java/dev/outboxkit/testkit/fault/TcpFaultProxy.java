package dev.outboxkit.testkit.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on a loopback port in front of one server (PostgreSQL, a Kafka broker, anything
 * that speaks TCP), with network faults that a test switches on and off while traffic flows:
 * <ul>
 *   <li>{@link #latency(Direction, Duration) latency}: every byte is held back for this long,
 *       per direction, without slowing the reading side (pipelined traffic is delayed, not
 *       serialised);</li>
 *   <li>{@link #bandwidth(Direction, long) bandwidth}: at most this many bytes per second, per
 *       connection and direction;</li>
 *   <li>{@link #blackhole()}: connections stay open, nothing is forwarded, and new connections
 *       are accepted but not connected onwards. Bytes sent meanwhile are held, not dropped — a
 *       partition that heals while TCP still retransmits — and reading stops once a small
 *       buffer is full, so senders block as they would on a real network. A client with a
 *       socket or request timeout sees it expire;</li>
 *   <li>{@link #reset()}: every current connection is closed with a TCP RST on both sides;
 *       {@link #resetAndRefuse()} also resets each new connection at once until
 *       {@link #heal()} (the client sees "connection reset" right after connecting);</li>
 *   <li>{@link #heal()}: all faults off; held bytes flow on;</li>
 *   <li>{@link #redirect(String, int)}: new connections go to another server from now on and the current
 *       ones are reset, as when a load balancer or DNS name is pointed at a promoted standby.</li>
 * </ul>
 * Faults apply to connections that are already open as well as to new ones. A connection
 * the server closes or resets is closed or reset towards the client the same way.
 *
 * <p>Thread per direction and side: four daemon threads per proxied connection, which is
 * plenty for the dozens of connections a test opens. Thread-safe.
 *
 * <pre>{@code
 * try (TcpFaultProxy proxy = TcpFaultProxy.start("pg", "127.0.0.1", 5432)) {
 *     String url = "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/app?socketTimeout=5";
 *     proxy.latency(Direction.TO_SERVER, Duration.ofMillis(50));
 *     proxy.blackhole();
 *     proxy.heal();
 * }
 * }</pre>
 */
public final class TcpFaultProxy implements AutoCloseable {

    /** Which way bytes travel through the proxy. */
    public enum Direction {
        /** From the client that connected to the proxy towards the upstream server. */
        TO_SERVER,
        /** From the upstream server back to the client. */
        TO_CLIENT
    }

    /** The faults in force: one immutable value, replaced as a whole. */
    record Faults(long latencyToServerNanos, long latencyToClientNanos, long bandwidthToServer, long bandwidthToClient,
                  boolean blackhole, boolean refuse) {

        static final Faults NONE = new Faults(0, 0, 0, 0, false, false);

        long latencyNanos(Direction d) {
            return d == Direction.TO_SERVER ? latencyToServerNanos : latencyToClientNanos;
        }

        long bandwidth(Direction d) {
            return d == Direction.TO_SERVER ? bandwidthToServer : bandwidthToClient;
        }

        Faults withLatency(Direction d, long nanos) {
            return d == Direction.TO_SERVER
                    ? new Faults(nanos, latencyToClientNanos, bandwidthToServer, bandwidthToClient, blackhole, refuse)
                    : new Faults(latencyToServerNanos, nanos, bandwidthToServer, bandwidthToClient, blackhole, refuse);
        }

        Faults withBandwidth(Direction d, long bytesPerSecond) {
            return d == Direction.TO_SERVER
                    ? new Faults(latencyToServerNanos, latencyToClientNanos, bytesPerSecond, bandwidthToClient, blackhole, refuse)
                    : new Faults(latencyToServerNanos, latencyToClientNanos, bandwidthToServer, bytesPerSecond, blackhole, refuse);
        }

        Faults withBlackhole(boolean on) {
            return new Faults(latencyToServerNanos, latencyToClientNanos, bandwidthToServer, bandwidthToClient, on, refuse);
        }

        Faults withRefuse(boolean on) {
            return new Faults(latencyToServerNanos, latencyToClientNanos, bandwidthToServer, bandwidthToClient, blackhole, on);
        }

        @Override
        public String toString() {
            if (equals(NONE)) {
                return "healthy";
            }
            StringBuilder s = new StringBuilder();
            if (latencyToServerNanos > 0 || latencyToClientNanos > 0) {
                s.append("latency to server ").append(latencyToServerNanos / 1_000_000).append(" ms, to client ")
                        .append(latencyToClientNanos / 1_000_000).append(" ms; ");
            }
            if (bandwidthToServer > 0 || bandwidthToClient > 0) {
                s.append("bandwidth to server ").append(bandwidthToServer == 0 ? "unlimited" : bandwidthToServer + " B/s")
                        .append(", to client ").append(bandwidthToClient == 0 ? "unlimited" : bandwidthToClient + " B/s")
                        .append("; ");
            }
            if (blackhole) {
                s.append("blackhole; ");
            }
            if (refuse) {
                s.append("refusing new connections; ");
            }
            return s.substring(0, s.length() - 2);
        }
    }

    private record Upstream(String host, int port) {
        @Override
        public String toString() {
            return host + ":" + port;
        }
    }

    private static final Logger log = LoggerFactory.getLogger(TcpFaultProxy.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final String name;
    private final InetAddress listenAddress;
    /** Where new connections go; replaced as a whole by {@link #redirect}. */
    private volatile Upstream upstream;
    private final ServerSocket server;
    private final Thread acceptor;
    private final Set<ProxiedConnection> connections = ConcurrentHashMap.newKeySet();
    private final Object faultChange = new Object();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong bytesToServer = new AtomicLong();
    private final AtomicLong bytesToClient = new AtomicLong();
    private volatile Faults faults = Faults.NONE;
    private volatile boolean closed;

    private TcpFaultProxy(String name, InetAddress listenAddress, int listenPort, String upstreamHost, int upstreamPort)
            throws IOException {
        this.name = name;
        this.listenAddress = listenAddress;
        this.upstream = new Upstream(upstreamHost, upstreamPort);
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(listenAddress, listenPort), 128);
        this.acceptor = new Thread(this::acceptLoop, "fault-proxy-" + name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        log.info("fault proxy {} listening on {} for {}", name, address(), upstream);
    }

    /** A proxy on a free loopback port in front of {@code upstreamHost:upstreamPort}. */
    public static TcpFaultProxy start(String name, String upstreamHost, int upstreamPort) {
        return start(name, 0, upstreamHost, upstreamPort);
    }

    /**
     * A proxy on loopback port {@code listenPort} (0: any free port) in front of
     * {@code upstreamHost:upstreamPort}. The upstream need not be up yet: the proxy connects
     * onwards only when a client connects, and resets that client when it cannot.
     */
    public static TcpFaultProxy start(String name, int listenPort, String upstreamHost, int upstreamPort) {
        return start(name, InetAddress.getLoopbackAddress(), listenPort, upstreamHost, upstreamPort);
    }

    /**
     * A proxy on {@code listenAddress}, a loopback address, port {@code listenPort} (0: any free port), in front of
     * {@code upstreamHost:upstreamPort}. On Linux every {@code 127.x.y.z} reaches this machine, so a proxy on
     * {@code 127.0.0.2} gives a server a second address that its certificate does not name (a wrong host name).
     *
     * @throws IllegalArgumentException when {@code listenAddress} is not a loopback address (the proxy serves this
     *                                  machine only)
     */
    public static TcpFaultProxy start(String name, InetAddress listenAddress, int listenPort, String upstreamHost,
                                      int upstreamPort) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(listenAddress, "listenAddress");
        if (!listenAddress.isLoopbackAddress()) {
            throw new IllegalArgumentException("listenAddress must be a loopback address, got " + listenAddress);
        }
        requireUpstream(upstreamHost, upstreamPort);
        if (listenPort < 0 || listenPort > 65535) {
            throw new IllegalArgumentException("listenPort must be between 0 and 65535, got " + listenPort);
        }
        try {
            return new TcpFaultProxy(name, listenAddress, listenPort, upstreamHost, upstreamPort);
        } catch (IOException e) {
            throw new UncheckedIOException("fault proxy " + name + " cannot listen on port " + listenPort + ": " + e.getMessage(), e);
        }
    }

    private static void requireUpstream(String upstreamHost, int upstreamPort) {
        Objects.requireNonNull(upstreamHost, "upstreamHost");
        if (upstreamPort < 1 || upstreamPort > 65535) {
            throw new IllegalArgumentException("upstreamPort must be between 1 and 65535, got " + upstreamPort);
        }
    }

    public String name() {
        return name;
    }

    /** {@code host:port} new connections are forwarded to. */
    public String upstream() {
        return upstream.toString();
    }

    /**
     * Sends new connections to {@code upstreamHost:upstreamPort} from now on and resets every current connection
     * (TCP RST towards client and server), as a load balancer or a DNS name does when it is pointed at another
     * server: clients reconnect and reach the new one. Faults in force stay in force.
     */
    public TcpFaultProxy redirect(String upstreamHost, int upstreamPort) {
        requireUpstream(upstreamHost, upstreamPort);
        Upstream before = upstream;
        upstream = new Upstream(upstreamHost, upstreamPort);
        // after the switch: a connection the acceptor adds from now on was opened towards the new upstream
        // or is reset by the acceptor itself (it checks the upstream again after adding)
        List<ProxiedConnection> current = List.copyOf(connections);
        current.forEach(ProxiedConnection::reset);
        log.info("fault proxy {} ({}): upstream {} -> {}, reset {} connection(s)", name, address(), before, upstream,
                current.size());
        return this;
    }

    /** The address it listens on: {@code 127.0.0.1} unless started on another loopback address. */
    public String host() {
        return listenAddress.getHostAddress();
    }

    /** The port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** {@code host:port} clients connect to, e.g. for {@code bootstrap.servers}. */
    public String address() {
        return host() + ":" + port();
    }

    /** Adds {@code latency} in both directions (zero: none). */
    public TcpFaultProxy latency(Duration latency) {
        return latency(Direction.TO_SERVER, latency).latency(Direction.TO_CLIENT, latency);
    }

    /** Holds every byte travelling in {@code direction} back for {@code latency} (zero: none). */
    public TcpFaultProxy latency(Direction direction, Duration latency) {
        Objects.requireNonNull(direction, "direction");
        if (latency.isNegative()) {
            throw new IllegalArgumentException("latency must not be negative, got " + latency);
        }
        return change(f -> f.withLatency(direction, latency.toNanos()));
    }

    /** Limits both directions to {@code bytesPerSecond} per connection (0: unlimited). */
    public TcpFaultProxy bandwidth(long bytesPerSecond) {
        return bandwidth(Direction.TO_SERVER, bytesPerSecond).bandwidth(Direction.TO_CLIENT, bytesPerSecond);
    }

    /** Limits {@code direction} to {@code bytesPerSecond} per connection (0: unlimited). */
    public TcpFaultProxy bandwidth(Direction direction, long bytesPerSecond) {
        Objects.requireNonNull(direction, "direction");
        if (bytesPerSecond < 0) {
            throw new IllegalArgumentException("bandwidth must be 0 (unlimited) or positive bytes/s, got " + bytesPerSecond);
        }
        return change(f -> f.withBandwidth(direction, bytesPerSecond));
    }

    /** Forwards nothing until {@link #heal()}; connections stay open. */
    public TcpFaultProxy blackhole() {
        return change(f -> f.withBlackhole(true));
    }

    /** Closes every current connection with a TCP RST towards client and server. */
    public TcpFaultProxy reset() {
        List<ProxiedConnection> current = List.copyOf(connections);
        current.forEach(ProxiedConnection::reset);
        log.info("fault proxy {}: reset {} connection(s)", name, current.size());
        return this;
    }

    /** {@link #reset()}, and resets every new connection right after accepting it until {@link #heal()}. */
    public TcpFaultProxy resetAndRefuse() {
        change(f -> f.withRefuse(true));
        return reset();
    }

    /** Switches every fault off; held bytes are forwarded. */
    public TcpFaultProxy heal() {
        return change(f -> Faults.NONE);
    }

    /** The faults in force, in words ("healthy" when none). */
    public String faults() {
        return faults.toString();
    }

    Faults currentFaults() {
        return faults;
    }

    /** Connections open through the proxy now. */
    public int activeConnections() {
        return connections.size();
    }

    /** Connections accepted since the proxy started (including reset and refused ones). */
    public long acceptedConnections() {
        return accepted.get();
    }

    /** Bytes written onwards in {@code direction} since the proxy started. */
    public long bytesForwarded(Direction direction) {
        return direction == Direction.TO_SERVER ? bytesToServer.get() : bytesToClient.get();
    }

    private TcpFaultProxy change(java.util.function.UnaryOperator<Faults> change) {
        synchronized (faultChange) {
            Faults before = faults;
            faults = change.apply(before);
            faultChange.notifyAll();
            if (!before.equals(faults)) {
                log.info("fault proxy {} ({} -> {}): {}", name, address(), upstream, faults);
            }
        }
        return this;
    }

    /**
     * Waits while a blackhole is in force; false when {@code connection} closed meanwhile.
     * The wait is woken by every fault change.
     */
    boolean awaitNoBlackhole(ProxiedConnection connection) throws InterruptedException {
        synchronized (faultChange) {
            while (faults.blackhole() && !connection.isClosed() && !closed) {
                faultChange.wait(200);
            }
        }
        return !connection.isClosed() && !closed;
    }

    void forwarded(Direction direction, int bytes) {
        (direction == Direction.TO_SERVER ? bytesToServer : bytesToClient).addAndGet(bytes);
    }

    void removed(ProxiedConnection connection) {
        connections.remove(connection);
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    log.warn("fault proxy {}: accept failed on {}: {}", name, address(), e.toString());
                }
                continue;
            }
            long id = accepted.incrementAndGet();
            if (faults.refuse() || closed) {
                ProxiedConnection.resetQuietly(client);
                continue;
            }
            Upstream target = upstream;
            ProxiedConnection connection = new ProxiedConnection(this, id, client, target.host(), target.port(),
                    CONNECT_TIMEOUT);
            connections.add(connection);
            if (faults.refuse() || closed || upstream != target) {
                // resetAndRefuse() or redirect() came between the check above and the add: its reset may not have
                // seen this one
                connection.reset();
                continue;
            }
            connection.open();
        }
    }

    /** Stops listening and resets every connection. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing; nothing to do
        }
        List.copyOf(connections).forEach(ProxiedConnection::reset);
        synchronized (faultChange) {
            faultChange.notifyAll();
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "TcpFaultProxy[" + name + " " + address() + " -> " + upstream + ", " + faults + "]";
    }
}
