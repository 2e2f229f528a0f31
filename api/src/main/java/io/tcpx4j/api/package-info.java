/**
 * The public types applications use to move host (DRAM) and GPU (VRAM) memory between
 * engines. JDK only: nothing here depends on the engine, a transport or an injector at compile time;
 * {@link io.tcpx4j.api.TransferEngines} finds the engine at run time.
 *
 * <p>Start at {@link io.tcpx4j.api.TransferEngine}, built by {@link io.tcpx4j.api.TransferEngines}.
 */
package io.tcpx4j.api;
