package io.kvroute.router.kvevents;

import io.kvroute.protocol.KvEvent;
import io.kvroute.protocol.KvEventBatch;
import io.kvroute.protocol.KvEventWire;
/**
 * Decodes one KV-event payload and applies it to a {@link BlockIndex} for one publisher slot, with
 * no sequence tracking: the measured unit of the ingest benchmark (the events plane runs the same
 * decoder and index calls behind its {@link PublisherStream}). Writer thread only.
 */
public final class KvEventIngest {
    private KvEventIngest() {}

    /**
     * @return the number of block hashes stored or removed, or -1 when the payload is malformed
     */
    public static int apply(byte[] payload, BlockIndex index, String model, int blockSize, int slot) {
        KvEventBatch batch;
        try {
            batch = KvEventWire.decodePayload(0, payload);
        } catch (KvEventWire.Malformed m) {
            return -1;
        }
        int blocks = 0;
        for (KvEvent e : batch.events()) {
            if (e instanceof KvEvent.BlockStored s) {
                index.store(new BlockIndex.Key(model, s.loraId(), blockSize), slot, s.hasParent(), s.parentHash(),
                        s.blockHashes());
                blocks += s.blockHashes().length;
            } else if (e instanceof KvEvent.BlockRemoved r) {
                index.remove(slot, r.blockHashes());
                blocks += r.blockHashes().length;
            } else {
                index.clear(slot);
            }
        }
        return blocks;
    }
}
