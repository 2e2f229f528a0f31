/**
 * Composition of an engine with Guice: {@link io.tcpx4j.inject.EngineModule} beside exactly one transport
 * module (loopback or TCPX) and, on GPU hosts, the CUDA unpack module, started and stopped by
 * {@link io.tcpx4j.inject.EngineLifecycle}. Without an injector, {@link io.tcpx4j.api.TransferEngines}
 * builds the same engine (and needs nothing from this module).
 */
package io.tcpx4j.inject;
