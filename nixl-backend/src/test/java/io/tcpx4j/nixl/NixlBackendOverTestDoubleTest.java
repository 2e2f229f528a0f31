package io.tcpx4j.nixl;

/**
 * The contract against {@link TransferEngineTestDouble}: fast and deterministic, it pins down the
 * backend's own bookkeeping (ids, handles, statuses) independent of the engine.
 */
class NixlBackendOverTestDoubleTest extends NixlBackendContract {

    private final TransferEngineTestDouble.Network network = new TransferEngineTestDouble.Network();

    @Override
    NixlBackend newBackend(String name) {
        TransferEngineTestDouble engine = new TransferEngineTestDouble(name, network, 1_000_000_000L);
        return new NixlBackend(engine, engine, CostModel.DEFAULT);
    }

    @Override
    int bigTransferBytes() {
        return 32 * MIB;
    }
}
