package io.tcpx4j.api;

/**
 * A snapshot of an engine's counters ({@link TransferEngine#stats()}), for monitoring and leak checks. Taken
 * without stopping the engine, so figures that its progress agents change may be slightly stale.
 *
 * @param connections         connections to peers, up or being set up
 * @param outstandingRequests transport requests posted and not yet completed
 * @param liveOperations      transfers in flight, initiated here or served for a peer
 * @param registeredRegions   memory regions registered and not yet closed
 * @param notificationsQueued notifications received and not yet taken by {@link TransferEngine#drainNotifications()}
 * @param dutyCycles          passes of the engine's progress agents since it started
 */
public record EngineStats(int connections, int outstandingRequests, int liveOperations, int registeredRegions,
                          int notificationsQueued, long dutyCycles) {
}
