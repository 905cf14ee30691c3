package io.kvroute.router.dispatch;

import java.util.function.Consumer;

/** Completion of one asynchronous write or read step: exactly one of the two methods is called. */
public interface Completion {

    void succeeded();

    void failed(Throwable failure);

    /** A completion from two actions. */
    static Completion of(Runnable onSuccess, Consumer<Throwable> onFailure) {
        return new Completion() {
            @Override
            public void succeeded() {
                onSuccess.run();
            }

            @Override
            public void failed(Throwable failure) {
                onFailure.accept(failure);
            }
        };
    }
}
