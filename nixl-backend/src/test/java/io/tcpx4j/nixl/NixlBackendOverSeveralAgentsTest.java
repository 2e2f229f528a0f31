package io.tcpx4j.nixl;

/**
 * The contract against engines of three progress agents each: every backend's peers are spread over
 * its agents, each reached through the port its conn info lists for it.
 */
class NixlBackendOverSeveralAgentsTest extends NixlBackendOverEngineTest {

    @Override
    int progressAgents() {
        return 3;
    }
}
