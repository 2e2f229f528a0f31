/**
 * The public types applications use to move host (DRAM) and GPU (VRAM) memory between
 * engines. JDK only: nothing here depends on the engine, a transport or an injector.
 *
 * <p>Start at {@link io.tcpx4j.api.TransferEngine}.
 */
package io.tcpx4j.api;
