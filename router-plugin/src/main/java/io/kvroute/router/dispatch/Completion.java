package io.kvroute.router.dispatch;

/** Completion of one asynchronous write or read step: exactly one of the two methods is called. */
public interface Completion {

    void succeeded();

    void failed(Throwable failure);

    /** A completion from two actions. */
    static Completion of(Runnable onSuccess, java.util.function.Consumer<Throwable> onFailure) {
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
