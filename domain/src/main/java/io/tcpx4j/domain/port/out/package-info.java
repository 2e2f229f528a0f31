/**
 * Outbound ports (the SPI) that adapters implement: {@link io.tcpx4j.domain.port.out.NetTransport}
 * (mirrors the NCCL net plugin so TCPX maps 1:1), {@link io.tcpx4j.domain.port.out.DeviceMemory},
 * {@link io.tcpx4j.domain.port.out.ScatterGather} and {@link io.tcpx4j.domain.port.out.Clock}. The first
 * three extend the api's {@link io.tcpx4j.api.Transport}, {@link io.tcpx4j.api.EngineMemory} and
 * {@link io.tcpx4j.api.EngineScatterGather}, so that an application hands an adapter to
 * {@link io.tcpx4j.api.TransferEngines} holding api types only.
 *
 * <p>Errors cross these ports as {@link io.tcpx4j.api.TransferException}; expected back-pressure
 * (a full slot pool, a comm not connected yet) is a {@code null} return, never an exception.
 */
package io.tcpx4j.domain.port.out;
