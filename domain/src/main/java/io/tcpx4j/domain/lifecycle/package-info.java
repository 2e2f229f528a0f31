/**
 * The life of one engine outside any injector: {@link io.tcpx4j.domain.lifecycle.Lifecycle} starts it (and
 * its warm-up) and stops it, closing what it was given in order; {@link
 * io.tcpx4j.domain.lifecycle.DomainEngineProvider} is what {@link io.tcpx4j.api.TransferEngines} finds
 * through {@link java.util.ServiceLoader}. The Guice module's {@code EngineLifecycle} runs the same
 * {@code Lifecycle}. The top room of the domain: it uses the engine and the warm-up, and nothing below uses it.
 */
package io.tcpx4j.domain.lifecycle;
