/** transport-loopback (work in progress). */
package io.tcpx4j.transport.loopback;
