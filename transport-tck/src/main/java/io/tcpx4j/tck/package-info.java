/**
 * The conformance suite every {@link io.tcpx4j.domain.port.out.NetTransport} adapter runs: subclass
 * {@link io.tcpx4j.tck.NetTransportConformanceTest} in the adapter's tests and supply the factory hooks.
 */
package io.tcpx4j.tck;
