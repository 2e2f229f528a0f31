/**
 * A kernel-TCP {@link io.tcpx4j.domain.port.out.NetTransport} that reproduces TCPX's semantics
 * (docs/ARCHITECTURE.md section 8), for CI and machines without TCPX. Public entry points:
 * {@link io.tcpx4j.transport.loopback.LoopbackTransport}, its
 * {@link io.tcpx4j.transport.loopback.LoopbackConfig} and the Guice
 * {@link io.tcpx4j.transport.loopback.LoopbackTransportModule}; everything else is package-private.
 */
package io.tcpx4j.transport.loopback;
