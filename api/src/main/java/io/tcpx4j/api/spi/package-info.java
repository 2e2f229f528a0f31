/**
 * The service interface through which {@link io.tcpx4j.api.TransferEngines} finds the engine at run time,
 * so that the api depends on no engine at compile time. Implemented by the engine module; applications do
 * not use it.
 */
package io.tcpx4j.api.spi;
