package io.tcpx4j.it.gpu;

import io.tcpx4j.cuda.GpuTest;

/**
 * {@link VramEngineTransferTest} over loopback transports without I/O threads: each engine's agent thread
 * stages, sends and receives itself, polling the staging copies that raise no socket event.
 */
@GpuTest
class VramEngineDriverTransferTest extends VramEngineTransferTest {

    @Override
    int ioThreads() {
        return 0;
    }
}
