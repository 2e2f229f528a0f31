/**
 * Guice wiring for applications: {@link io.tcpx4j.inject.EngineModule} beside exactly one transport
 * module (loopback or TCPX) and, on GPU hosts, the CUDA unpack module.
 */
package io.tcpx4j.inject;
