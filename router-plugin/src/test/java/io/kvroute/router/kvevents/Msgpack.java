package io.kvroute.router.kvevents;

import java.io.IOException;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** Payloads packed by hand with a raw msgpack packer (not the publisher's encoder), for the plane's tests. */
final class Msgpack {
    private Msgpack() {}

    interface Body {
        void pack(MessageBufferPacker p) throws IOException;
    }

    static byte[] pack(Body body) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            body.pack(p);
            return p.toByteArray();
        }
    }
}
