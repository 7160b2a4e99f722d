package dev.outboxkit.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.Ports;
import dev.outboxkit.testkit.fault.TcpFaultProxy.Direction;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The proxy against a plain echo server on a real socket. */
class TcpFaultProxyTest {

    private ServerSocket echoServer;
    private Thread echoAcceptor;

    @BeforeEach
    void startEchoServer() throws IOException {
        echoServer = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        echoAcceptor = new Thread(() -> {
            while (!echoServer.isClosed()) {
                try {
                    Socket s = echoServer.accept();
                    Thread t = new Thread(() -> echo(s), "echo");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "echo-accept");
        echoAcceptor.setDaemon(true);
        echoAcceptor.start();
    }

    /** Echoes until the client finishes sending, then closes (FIN). */
    private static void echo(Socket s) {
        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
            }
        } catch (IOException e) {
            // the proxy reset us: fine
        }
    }

    @AfterEach
    void stopEchoServer() throws Exception {
        echoServer.close();
        echoAcceptor.join(5_000);
    }

    private TcpFaultProxy proxy() {
        return TcpFaultProxy.start("echo", "127.0.0.1", echoServer.getLocalPort());
    }

    private static Socket connect(TcpFaultProxy proxy) throws IOException {
        Socket s = new Socket(proxy.host(), proxy.port());
        s.setSoTimeout(30_000);
        s.setTcpNoDelay(true);
        return s;
    }

    private static byte[] readExactly(Socket s, int length) throws IOException {
        return s.getInputStream().readNBytes(length);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void forwardsBothWaysCountsBytesAndPassesOnAClose() throws Exception {
        try (TcpFaultProxy proxy = proxy(); Socket s = connect(proxy)) {
            s.getOutputStream().write(bytes("hello"));
            assertThat(readExactly(s, 5)).isEqualTo(bytes("hello"));
            assertThat(proxy.acceptedConnections()).isEqualTo(1);
            assertThat(proxy.activeConnections()).isEqualTo(1);
            // counted just after each write returns, so the client may read before the count moves
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(proxy.bytesForwarded(Direction.TO_SERVER)).isEqualTo(5);
                assertThat(proxy.bytesForwarded(Direction.TO_CLIENT)).isEqualTo(5);
            });
            assertThat(proxy.faults()).isEqualTo("healthy");

            s.shutdownOutput(); // the echo server sees the end, closes, and the proxy passes that back
            assertThat(s.getInputStream().read()).isEqualTo(-1);
            await().atMost(Duration.ofSeconds(30)).until(() -> proxy.activeConnections() == 0);
        }
    }

    @Test
    void blackholeHoldsBytesUntilHealThenDeliversThemInOrder() throws Exception {
        try (TcpFaultProxy proxy = proxy(); Socket s = connect(proxy)) {
            s.getOutputStream().write(bytes("before"));
            assertThat(readExactly(s, 6)).isEqualTo(bytes("before"));
            await().atMost(Duration.ofSeconds(30)).until(() -> proxy.bytesForwarded(Direction.TO_SERVER) == 6);

            proxy.blackhole();
            assertThat(proxy.faults()).isEqualTo("blackhole");
            s.getOutputStream().write(bytes("during"));
            s.setSoTimeout(700);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
            assertThat(proxy.bytesForwarded(Direction.TO_SERVER)).isEqualTo(6);

            proxy.heal();
            s.setSoTimeout(30_000);
            assertThat(readExactly(s, 6)).isEqualTo(bytes("during"));
        }
    }

    @Test
    void aConnectionOpenedDuringABlackholeIsAcceptedButConnectedOnwardsOnlyAfterHeal() throws Exception {
        try (TcpFaultProxy proxy = proxy()) {
            proxy.blackhole();
            try (Socket s = connect(proxy)) {
                s.getOutputStream().write(bytes("x"));
                s.setSoTimeout(500);
                assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
                proxy.heal();
                s.setSoTimeout(30_000);
                assertThat(readExactly(s, 1)).isEqualTo(bytes("x"));
            }
        }
    }

    @Test
    void resetClosesCurrentConnectionsWithAnRstAndNewOnesStillWork() throws Exception {
        try (TcpFaultProxy proxy = proxy(); Socket s = connect(proxy)) {
            s.getOutputStream().write(bytes("a"));
            assertThat(readExactly(s, 1)).isEqualTo(bytes("a"));

            proxy.reset();
            assertThatThrownBy(() -> s.getInputStream().read())
                    .isInstanceOf(SocketException.class).hasMessageContaining("reset");
            try (Socket again = connect(proxy)) {
                again.getOutputStream().write(bytes("b"));
                assertThat(readExactly(again, 1)).isEqualTo(bytes("b"));
            }
        }
    }

    @Test
    void redirectSendsNewConnectionsToTheNewUpstreamAndResetsTheOpenOnes() throws Exception {
        try (ServerSocket other = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             TcpFaultProxy proxy = proxy(); Socket s = connect(proxy)) {
            Thread greeter = new Thread(() -> {
                while (!other.isClosed()) {
                    try (Socket c = other.accept()) {
                        c.getOutputStream().write(bytes("other"));
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "other-accept");
            greeter.setDaemon(true);
            greeter.start();
            s.getOutputStream().write(bytes("a"));
            assertThat(readExactly(s, 1)).isEqualTo(bytes("a"));

            proxy.redirect("127.0.0.1", other.getLocalPort());
            assertThat(proxy.upstream()).isEqualTo("127.0.0.1:" + other.getLocalPort());
            assertThatThrownBy(() -> s.getInputStream().read())
                    .isInstanceOf(SocketException.class).hasMessageContaining("reset");
            try (Socket again = connect(proxy)) {
                assertThat(readExactly(again, 5)).isEqualTo(bytes("other"));
            }
            assertThatThrownBy(() -> proxy.redirect("127.0.0.1", 0))
                    .hasMessageContaining("upstreamPort must be between 1 and 65535, got 0");
            assertThat(proxy.upstream()).isEqualTo("127.0.0.1:" + other.getLocalPort());
        }
    }

    @Test
    void resetAndRefuseResetsEveryNewConnectionUntilHeal() throws Exception {
        try (TcpFaultProxy proxy = proxy()) {
            proxy.resetAndRefuse();
            assertThat(proxy.faults()).isEqualTo("refusing new connections");
            try (Socket s = connect(proxy)) {
                assertThatThrownBy(() -> {
                    s.getOutputStream().write(bytes("x"));
                    s.getInputStream().read();
                }).isInstanceOf(SocketException.class);
            }
            proxy.heal();
            try (Socket s = connect(proxy)) {
                s.getOutputStream().write(bytes("y"));
                assertThat(readExactly(s, 1)).isEqualTo(bytes("y"));
            }
        }
    }

    @Test
    void aClientIsResetWhenTheUpstreamCannotBeReached() throws Exception {
        try (TcpFaultProxy proxy = TcpFaultProxy.start("nowhere", "127.0.0.1", Ports.free()); Socket s = connect(proxy)) {
            assertThatThrownBy(() -> {
                s.getOutputStream().write(bytes("x"));
                s.getInputStream().read();
            }).isInstanceOf(SocketException.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> proxy.activeConnections() == 0);
        }
    }

    @Test
    void latencyIsAddedPerDirection() throws Exception {
        try (TcpFaultProxy proxy = proxy(); Socket s = connect(proxy)) {
            long healthy = roundTripMillis(s);
            proxy.latency(Direction.TO_CLIENT, Duration.ofMillis(150));
            assertThat(roundTripMillis(s)).isGreaterThanOrEqualTo(150);
            proxy.latency(Direction.TO_SERVER, Duration.ofMillis(100));
            assertThat(roundTripMillis(s)).isGreaterThanOrEqualTo(250);
            proxy.heal();
            assertThat(roundTripMillis(s)).isLessThan(healthy + 150);
        }
    }

    /** The least of three round trips of one byte. */
    private static long roundTripMillis(Socket s) throws IOException {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long start = System.nanoTime();
            s.getOutputStream().write(1);
            assertThat(s.getInputStream().read()).isEqualTo(1);
            best = Math.min(best, (System.nanoTime() - start) / 1_000_000);
        }
        return best;
    }

    @Test
    void latencyDelaysPipelinedBytesOnceNotPerChunk() throws Exception {
        try (TcpFaultProxy proxy = proxy(); Socket s = connect(proxy)) {
            proxy.latency(Direction.TO_SERVER, Duration.ofMillis(300));
            long start = System.nanoTime();
            for (int i = 0; i < 10; i++) {
                s.getOutputStream().write(new byte[] {(byte) i});
                Thread.sleep(5); // separate writes, so the proxy reads them as separate chunks
            }
            byte[] back = readExactly(s, 10);
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertThat(back).isEqualTo(new byte[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
            // ten chunks, each held 300 ms but all at once: far less than 10 x 300 ms
            assertThat(millis).isBetween(300L, 2_000L);
        }
    }

    @Test
    void bandwidthLimitPacesTheTransfer() throws Exception {
        try (TcpFaultProxy proxy = proxy(); Socket s = connect(proxy)) {
            byte[] payload = new byte[100_000];
            Arrays.fill(payload, (byte) 7);
            proxy.bandwidth(Direction.TO_CLIENT, 50_000);
            long start = System.nanoTime();
            Thread writer = new Thread(() -> {
                try {
                    s.getOutputStream().write(payload);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            writer.start();
            assertThat(readExactly(s, payload.length)).isEqualTo(payload);
            long millis = (System.nanoTime() - start) / 1_000_000;
            writer.join();
            // 100 kB at 50 kB/s: about 2 s (the first slice goes at once)
            assertThat(millis).isGreaterThanOrEqualTo(1_800);

            proxy.heal();
            start = System.nanoTime();
            s.getOutputStream().write(payload);
            assertThat(readExactly(s, payload.length)).isEqualTo(payload);
            assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1_800);
        }
    }

    @Test
    void settingsAreValidated() {
        try (TcpFaultProxy proxy = proxy()) {
            assertThatThrownBy(() -> proxy.latency(Duration.ofMillis(-1)))
                    .hasMessageContaining("latency must not be negative");
            assertThatThrownBy(() -> proxy.bandwidth(-5))
                    .hasMessageContaining("bandwidth must be 0 (unlimited) or positive bytes/s, got -5");
            proxy.latency(Duration.ofMillis(20)).bandwidth(Direction.TO_SERVER, 1000);
            assertThat(proxy.faults()).isEqualTo("latency to server 20 ms, to client 20 ms; "
                    + "bandwidth to server 1000 B/s, to client unlimited");
        }
        assertThatThrownBy(() -> TcpFaultProxy.start("x", "127.0.0.1", 0))
                .hasMessageContaining("upstreamPort must be between 1 and 65535, got 0");
    }
}
