package io.kvroute.bench.jmh;

import io.kvroute.router.kvevents.BlockIndex;
import java.util.SplittableRandom;
import org.openjdk.jol.info.GraphLayout;

/**
 * Memory of the exact KV-event index per million stored blocks, measured with JOL (retained graph
 * of the index), for 1 and 64 publishers sharing the blocks. Run:
 * {@code java -cp integration-tests/target/kvroute-bench.jar io.kvroute.bench.jmh.KvIndexMemory}.
 */
public final class KvIndexMemory {
    private KvIndexMemory() {}

    public static void main(String[] args) {
        for (int publishers : new int[] {1, 64}) {
            for (int millions : new int[] {1, 2}) {
                BlockIndex index = new BlockIndex(Integer.MAX_VALUE);
                SplittableRandom rnd = new SplittableRandom(5);
                BlockIndex.Key key = new BlockIndex.Key("m", -1, 16);
                int total = millions * 1_000_000;
                long[] chunk = new long[1000];
                for (int n = 0; n < total; n += chunk.length) {
                    for (int i = 0; i < chunk.length; i++) {
                        chunk[i] = rnd.nextLong();
                    }
                    index.store(key, (n / chunk.length) % publishers, chunk);
                }
                long bytes = GraphLayout.parseInstance(index).totalSize();
                System.out.printf("publishers=%d blocks=%,d retained=%,d bytes  per block=%.1f B  per million=%.1f MiB%n",
                        publishers, index.liveBlocks(), bytes, (double) bytes / index.liveBlocks(),
                        bytes / (index.liveBlocks() / 1e6) / (1 << 20));
            }
        }
    }
}
