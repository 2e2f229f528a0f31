package io.tcpx4j.cli;

/** The transports the CLI can run over. */
enum TransportKind {
    /** Kernel TCP, as strict as TCPX (module transport-loopback); works everywhere. */
    LOOPBACK,
    /** Google's GPUDirect-TCPX NCCL net plugin (module transport-tcpx); A3 VMs. */
    TCPX;

    String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
