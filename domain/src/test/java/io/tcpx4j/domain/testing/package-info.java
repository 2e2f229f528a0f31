/**
 * Test doubles of the outbound ports, for engine tests in this module and (through domain's test-jar)
 * in adapter and integration modules. Each is named as a double and is as strict as the real
 * adapter it stands in for: a double that forgives what TCPX rejects would let engine bugs through.
 *
 * <p>{@link io.tcpx4j.domain.testing.InMemoryFabric} with
 * {@link io.tcpx4j.domain.testing.InMemoryNetTransportDouble}: an in-process
 * {@link io.tcpx4j.domain.port.out.NetTransport} with TCPX's limits and a devmem mode.
 */
package io.tcpx4j.domain.testing;
