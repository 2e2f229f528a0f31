/**
 * Micrometer meters for tcpx4j, added from outside the engine by decorators:
 * {@link io.tcpx4j.metrics.MeteredTransferEngine} (transfers, bytes, latency, errors and transfers in flight,
 * per peer, operation and memory kind, of the transfers this engine posts),
 * {@link io.tcpx4j.metrics.EngineGauges} (connections, outstanding requests, live operations, regions and
 * queued notifications from the engine's own counters, and per peer what it wrote into and read from the
 * engine's memory and what the engine refused it) and {@link io.tcpx4j.metrics.MeteredNetTransport}
 * (requests posted, completed and failed, and bytes moved, per device and direction, which includes what
 * peers read from or write into this engine). {@link io.tcpx4j.metrics.PrometheusEndpoint} serves a
 * Prometheus registry as text over HTTP.
 */
package io.tcpx4j.metrics;
