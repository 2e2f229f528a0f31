package io.tcpx4j.domain.lifecycle;

import io.tcpx4j.api.ForwardingTransferEngine;
import io.tcpx4j.api.TransferEngine;

/**
 * The engine {@link DomainEngineProvider} hands out: every call goes to the started engine, except that
 * {@link #close()} stops the lifecycle, which closes the engine and everything made or handed over for it.
 *
 * <p>Thread-safe, as the engine is.
 */
final class OwningEngine extends ForwardingTransferEngine {

    private final Lifecycle lifecycle;

    OwningEngine(TransferEngine engine, Lifecycle lifecycle) {
        super(engine);
        this.lifecycle = lifecycle;
    }

    @Override
    public void close() {
        lifecycle.stop();
    }
}
