/**
 * The NIXL backend "TCPX": {@link io.tcpx4j.nixl.NixlBackend} mirrors NIXL's backend engine method
 * for method with NIXL's numeric statuses, {@link io.tcpx4j.nixl.NixlBackends} is the composition
 * root (one Guice injector per backend, transport chosen by configuration) and
 * {@link io.tcpx4j.nixl.NixlBridge} the entry point of the C bridge (src/main/native/bridge). The
 * C++ plugin that NIXL loads lives in src/main/native/plugin. See docs/NIXL.md.
 */
package io.tcpx4j.nixl;
