/**
 * Composition of an engine for applications: {@link io.tcpx4j.inject.TransferEngines} builds and starts one
 * over a transport without an injector; with Guice, {@link io.tcpx4j.inject.EngineModule} beside exactly one
 * transport module (loopback or TCPX) and, on GPU hosts, the CUDA unpack module, started and stopped by
 * {@link io.tcpx4j.inject.EngineLifecycle}.
 */
package io.tcpx4j.inject;
