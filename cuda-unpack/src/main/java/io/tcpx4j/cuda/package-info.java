/**
 * CUDA adapter: {@link io.tcpx4j.cuda.CudaDeviceMemory} (device memory, pinned host buffers,
 * copies and events on the CUDA driver API through JCuda), {@link io.tcpx4j.cuda.CudaScatterGather} (the
 * unpack kernel that scatters TCPX bounce pages into place, many receives per launch) and the Guice
 * {@link io.tcpx4j.cuda.CudaUnpackModule}. {@link io.tcpx4j.cuda.Cuda} probes whether a driver and a
 * GPU are usable.
 */
package io.tcpx4j.cuda;
