package dev.outboxkit.writer;

import dev.outboxkit.testkit.TestDatabase;
import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.SocketFactory;

/**
 * Sits in the PostgreSQL driver's socket (pgjdbc's {@code socketFactory} property) to count
 * network round trips and to cut a connection at a chosen moment.
 *
 * <p>A round trip is counted each time the driver starts reading after it wrote: that is when
 * it waits for the server. A pipelined request (many statements, one flush) counts once; N
 * statements that each wait for their reply count N times.
 */
final class WireTap {

    /** What to do when the driver writes bytes containing a marker. */
    enum Fault {
        /** Send them, let the server answer, then fail the read: the server did the work, the client cannot know. */
        SEND_THEN_CUT,
        /** Close the socket instead of sending: the server never sees them and rolls back. */
        CUT_BEFORE_SEND
    }

    private record Trap(byte[] marker, Fault fault) {
    }

    private static final Map<String, WireTap> TAPS = new ConcurrentHashMap<>();

    private final String name = "tap-" + UUID.randomUUID();
    private final AtomicLong roundTrips = new AtomicLong();
    private final AtomicReference<Trap> trap = new AtomicReference<>();

    WireTap() {
        TAPS.put(name, this);
    }

    /** The JDBC URL of {@code db} with this tap in its socket. */
    String jdbcUrl(TestDatabase db) {
        return db.jdbcUrl() + (db.jdbcUrl().contains("?") ? "&" : "?") + "socketFactory=" + Factory.class.getName()
                + "&socketFactoryArg=" + name;
    }

    /** A new connection (autocommit on) through this tap. */
    Connection connect(TestDatabase db) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", db.user());
        props.setProperty("password", db.password());
        return DriverManager.getConnection(jdbcUrl(db), props);
    }

    /** Round trips of all connections through this tap so far. */
    long roundTrips() {
        return roundTrips.get();
    }

    /** Arms a one-shot fault for the next write that contains {@code marker} (ASCII, e.g. SQL text). */
    void cutAt(String marker, Fault fault) {
        trap.set(new Trap(marker.getBytes(StandardCharsets.US_ASCII), fault));
    }

    /** Instantiated by pgjdbc with the socketFactoryArg. */
    public static final class Factory extends SocketFactory {
        private final WireTap tap;

        public Factory(String arg) {
            tap = TAPS.get(arg);
            if (tap == null) {
                throw new IllegalArgumentException("no wire tap named " + arg);
            }
        }

        @Override
        public Socket createSocket() {
            return tap.new TapSocket();
        }

        @Override
        public Socket createSocket(String host, int port) {
            throw new UnsupportedOperationException("pgjdbc connects an unconnected socket");
        }

        @Override
        public Socket createSocket(String host, int port, java.net.InetAddress localHost, int localPort) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Socket createSocket(java.net.InetAddress host, int port) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Socket createSocket(java.net.InetAddress address, int port, java.net.InetAddress localAddress, int localPort) {
            throw new UnsupportedOperationException();
        }
    }

    private final class TapSocket extends Socket {
        private boolean wroteLast;
        private boolean cutOnNextRead;
        private InputStream in;
        private OutputStream out;

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) {
                in = new FilterInputStream(super.getInputStream()) {
                    @Override
                    public int read() throws IOException {
                        beforeRead();
                        return super.read();
                    }

                    @Override
                    public int read(byte[] b, int off, int len) throws IOException {
                        beforeRead();
                        int n = super.read(b, off, len);
                        afterRead(n);
                        return n;
                    }
                };
            }
            return in;
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (out == null) {
                out = new FilterOutputStream(super.getOutputStream()) {
                    @Override
                    public void write(int b) throws IOException {
                        write(new byte[] {(byte) b}, 0, 1);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) throws IOException {
                        Trap t = trap.get();
                        if (t != null && contains(b, off, len, t.marker()) && trap.compareAndSet(t, null)) {
                            if (t.fault() == Fault.CUT_BEFORE_SEND) {
                                close();
                                throw new SocketException("connection cut by the test before sending");
                            }
                            cutOnNextRead = true;
                        }
                        wroteLast = true;
                        out.write(b, off, len);
                    }
                };
            }
            return out;
        }

        private void beforeRead() {
            if (wroteLast) {
                roundTrips.incrementAndGet();
                wroteLast = false;
            }
        }

        private void afterRead(int n) throws IOException {
            if (cutOnNextRead && n > 0) {
                close();
                throw new SocketException("connection cut by the test after the server answered");
            }
        }
    }

    private static boolean contains(byte[] buf, int off, int length, byte[] marker) {
        outer:
        for (int i = off; i + marker.length <= off + length; i++) {
            for (int j = 0; j < marker.length; j++) {
                if (buf[i + j] != marker[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
