package dev.outboxkit.benchmarks.load;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Child JVM for {@link ProcessMemoryTest}: touches N MiB, says so, and waits to be killed. */
public final class AllocatingChild {

    static final String READY = "allocated";

    private AllocatingChild() {
    }

    public static void main(String[] args) throws InterruptedException {
        int mib = Integer.parseInt(args[0]);
        List<byte[]> blocks = new ArrayList<>();
        for (int i = 0; i < mib; i++) {
            byte[] block = new byte[1 << 20];
            for (int j = 0; j < block.length; j += 4096) {
                block[j] = 1;
            }
            blocks.add(block);
        }
        System.out.println(READY + " " + blocks.size() + " MiB");
        TimeUnit.MINUTES.sleep(5);
    }
}
