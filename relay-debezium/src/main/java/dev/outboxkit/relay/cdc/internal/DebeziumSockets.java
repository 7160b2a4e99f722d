package dev.outboxkit.relay.cdc.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.SocketFactory;

/**
 * Not API: public because the PostgreSQL driver instantiates it by name ({@code socketFactory}, with the session's key
 * as {@code socketFactoryArg}).
 *
 * <p>The sockets of one session's Debezium connections, its replication connection among them, so the session can cut
 * them at once. Why: when the server shuts down cleanly (a planned switchover) its walsender waits until the client has
 * confirmed all WAL it was sent, and closing the replication stream politely waits for the walsender in turn, while
 * this relay confirms only what it stored in that very database, which refuses writes now. Closing the socket ends the
 * walsender at once; otherwise the shutdown waits for {@code wal_sender_timeout}.
 */
public final class DebeziumSockets extends SocketFactory {

    /** A session's sockets; once cut, every socket it opens is closed at once. */
    private static final class Sockets {
        final Set<Socket> open = ConcurrentHashMap.newKeySet();
        volatile boolean cut;
    }

    private static final Map<String, Sockets> SESSIONS = new ConcurrentHashMap<>();

    private final String key;

    /** @param key the session whose sockets these are ({@link #register}) */
    public DebeziumSockets(String key) {
        this.key = key;
    }

    /** Starts tracking the sockets of session {@code key}. */
    static void register(String key) {
        SESSIONS.put(key, new Sockets());
    }

    /** Closes every socket session {@code key} opened, and every one it opens from now on; returns how many were open. */
    static int cut(String key) {
        Sockets sockets = SESSIONS.get(key);
        if (sockets == null) {
            return 0;
        }
        sockets.cut = true;
        int closed = 0;
        for (Socket s : sockets.open) {
            if (!s.isClosed()) {
                closeQuietly(s);
                closed++;
            }
        }
        return closed;
    }

    /** Stops tracking session {@code key} (it ended). */
    static void unregister(String key) {
        SESSIONS.remove(key);
    }

    private Socket tracked(Socket s) throws IOException {
        Sockets sockets = SESSIONS.get(key);
        if (sockets != null) {
            sockets.open.removeIf(Socket::isClosed);
            sockets.open.add(s);
            if (sockets.cut) {
                closeQuietly(s);
                throw new IOException("the relay's session ended: its connections are closed");
            }
        }
        return s;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing is all that is wanted: a socket that fails to close is gone already
        }
    }

    @Override
    public Socket createSocket() throws IOException {
        return tracked(new Socket());
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return tracked(new Socket(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return tracked(new Socket(host, port, localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return tracked(new Socket(host, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return tracked(new Socket(address, port, localAddress, localPort));
    }
}
