/**
 * Binding to the GPUDirect-TCPX NCCL net plugin (JNA). Public entry points: {@link
 * io.tcpx4j.transport.tcpx.Tcpx} (availability probe), {@link io.tcpx4j.transport.tcpx.TcpxTransport}
 * ({@code NetTransport}), {@link io.tcpx4j.transport.tcpx.TcpxOptions} and {@link
 * io.tcpx4j.transport.tcpx.TcpxTransportModule} (Guice). Everything else is package-private. See
 * docs/TCPX.md for running on A3.
 */
package io.tcpx4j.transport.tcpx;
