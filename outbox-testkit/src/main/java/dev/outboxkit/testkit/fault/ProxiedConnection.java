package dev.outboxkit.testkit.fault;

import dev.outboxkit.testkit.fault.TcpFaultProxy.Direction;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection through a {@link TcpFaultProxy} and its upstream connection. Each
 * direction has a reader (takes bytes off one socket as they come, stamping when) and a writer
 * (hands them on once latency, blackhole and bandwidth allow), joined by a small bounded queue:
 * when the writer is held, the reader soon stops reading and the sender's TCP window closes.
 */
final class ProxiedConnection {

    private static final Logger log = LoggerFactory.getLogger(ProxiedConnection.class);
    private static final int CHUNK = 16 * 1024;
    private static final int QUEUED_CHUNKS = 16;
    /** Bandwidth is paced in slices of a twentieth of a second's worth of bytes. */
    private static final int SLICES_PER_SECOND = 20;
    private static final Chunk END = new Chunk(new byte[0], 0);

    private record Chunk(byte[] bytes, long readAtNanos) {
    }

    private final TcpFaultProxy proxy;
    private final long id;
    private final Socket client;
    private final String upstreamHost;
    private final int upstreamPort;
    private final Duration connectTimeout;
    private final AtomicInteger directionsDone = new AtomicInteger();
    private Socket upstream;
    private boolean closed;
    private Thread[] writers = new Thread[0];

    ProxiedConnection(TcpFaultProxy proxy, long id, Socket client, String upstreamHost, int upstreamPort,
                      Duration connectTimeout) {
        this.proxy = proxy;
        this.id = id;
        this.client = client;
        this.upstreamHost = upstreamHost;
        this.upstreamPort = upstreamPort;
        this.connectTimeout = connectTimeout;
    }

    void open() {
        Thread opener = new Thread(this::connectAndForward, threadName("to-server-read"));
        opener.setDaemon(true);
        opener.start();
    }

    synchronized boolean isClosed() {
        return closed;
    }

    private String threadName(String role) {
        return "fault-proxy-" + proxy.name() + "-" + id + "-" + role;
    }

    private void connectAndForward() {
        try {
            client.setTcpNoDelay(true);
            if (!proxy.awaitNoBlackhole(this)) {
                return;
            }
            Socket up = new Socket();
            up.setTcpNoDelay(true);
            try {
                up.connect(new InetSocketAddress(upstreamHost, upstreamPort), (int) connectTimeout.toMillis());
            } catch (IOException e) {
                log.debug("fault proxy {}: connection {} cannot reach {}:{}: {}", proxy.name(), id, upstreamHost,
                        upstreamPort, e.toString());
                resetQuietly(up);
                reset();
                return;
            }
            BlockingQueue<Chunk> toServer = new ArrayBlockingQueue<>(QUEUED_CHUNKS);
            BlockingQueue<Chunk> toClient = new ArrayBlockingQueue<>(QUEUED_CHUNKS);
            Thread serverWriter = thread("to-server-write", () -> write(toServer, up, Direction.TO_SERVER));
            Thread clientWriter = thread("to-client-write", () -> write(toClient, client, Direction.TO_CLIENT));
            Thread clientReader = thread("to-client-read", () -> read(up, toClient));
            synchronized (this) {
                if (closed) {
                    resetQuietly(up);
                    return;
                }
                upstream = up;
                writers = new Thread[] {serverWriter, clientWriter};
            }
            serverWriter.start();
            clientWriter.start();
            clientReader.start();
            read(client, toServer);
        } catch (IOException | InterruptedException e) {
            reset();
        }
    }

    private Thread thread(String role, Runnable body) {
        Thread t = new Thread(body, threadName(role));
        t.setDaemon(true);
        return t;
    }

    private void read(Socket from, BlockingQueue<Chunk> queue) {
        try {
            InputStream in = from.getInputStream();
            byte[] buffer = new byte[CHUNK];
            while (true) {
                int n = in.read(buffer);
                if (n < 0) {
                    queue.put(END);
                    return;
                }
                queue.put(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime()));
            }
        } catch (IOException | InterruptedException e) {
            // reset by a peer or by the proxy: the whole connection goes the same way
            reset();
        }
    }

    private void write(BlockingQueue<Chunk> queue, Socket to, Direction direction) {
        try {
            OutputStream out = to.getOutputStream();
            long nextFreeNanos = System.nanoTime();
            while (true) {
                Chunk chunk = queue.take();
                if (chunk == END) {
                    to.shutdownOutput();
                    if (directionsDone.incrementAndGet() == 2) {
                        closeGracefully();
                    }
                    return;
                }
                awaitLatency(chunk, direction);
                int offset = 0;
                while (offset < chunk.bytes().length) {
                    if (!proxy.awaitNoBlackhole(this)) {
                        return;
                    }
                    long rate = proxy.currentFaults().bandwidth(direction);
                    int remaining = chunk.bytes().length - offset;
                    int slice = rate == 0 ? remaining : (int) Math.max(1, Math.min(remaining, rate / SLICES_PER_SECOND));
                    if (rate > 0) {
                        sleepUntil(nextFreeNanos);
                    }
                    out.write(chunk.bytes(), offset, slice);
                    proxy.forwarded(direction, slice);
                    if (rate > 0) {
                        nextFreeNanos = Math.max(nextFreeNanos, System.nanoTime()) + slice * 1_000_000_000L / rate;
                    }
                    offset += slice;
                }
            }
        } catch (IOException | InterruptedException e) {
            reset();
        }
    }

    /** Latency is read again while waiting, so healing releases held bytes at once. */
    private void awaitLatency(Chunk chunk, Direction direction) throws InterruptedException {
        while (true) {
            long wait = chunk.readAtNanos() + proxy.currentFaults().latencyNanos(direction) - System.nanoTime();
            if (wait <= 0) {
                return;
            }
            TimeUnit.NANOSECONDS.sleep(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long wait = nanoTime - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }

    /** Both sides finished sending: close normally. */
    private void closeGracefully() {
        Socket up;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            up = upstream;
        }
        closeQuietly(client);
        closeQuietly(up);
        proxy.removed(this);
    }

    /** Closes both sockets with a TCP RST and stops this connection's threads. */
    void reset() {
        Socket up;
        Thread[] toStop;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            up = upstream;
            toStop = writers;
        }
        resetQuietly(client);
        resetQuietly(up);
        for (Thread t : toStop == null ? new Thread[0] : toStop) { // null: reset while still connecting upstream
            if (t != Thread.currentThread()) {
                t.interrupt();
            }
        }
        proxy.removed(this);
    }

    /** SO_LINGER 0 makes close() send an RST instead of a FIN. */
    static void resetQuietly(Socket socket) {
        if (socket == null) {
            return;
        }
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException e) {
            // already closed
        }
        closeQuietly(socket);
    }

    private static void closeQuietly(Socket socket) {
        if (socket == null) {
            return;
        }
        try {
            socket.close();
        } catch (IOException e) {
            // nothing more to do
        }
    }
}
