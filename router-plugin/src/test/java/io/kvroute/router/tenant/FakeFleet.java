package io.kvroute.router.tenant;

import java.util.function.IntSupplier;

/** A fleet for {@link QosGate} tests: as many usable workers as {@code usable} says, engines never saturated. */
public record FakeFleet(IntSupplier usable) implements QosGate.Fleet {

    @Override
    public int usableWorkers() {
        return usable.getAsInt();
    }

    @Override
    public boolean engineSaturated() {
        return false;
    }
}
