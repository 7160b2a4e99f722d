package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PortsTest {

    @Test
    void portsForRestartsLieBelowTheEphemeralRangeAreBindableAndNeverHandedOutTwice() throws Exception {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        int ephemeralLow = Files.isReadable(range)
                ? Integer.parseInt(Files.readAllLines(range).get(0).trim().split("\\s+")[0]) : 32_768;
        assertThat(ephemeralLow).as("this machine's ephemeral range leaves room below it").isGreaterThan(11_000);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 20; i++) {
            int port = Ports.freeForRestarts();
            assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
            assertThat(port).isBetween(10_000, ephemeralLow - 1);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            }
        }
    }
}
