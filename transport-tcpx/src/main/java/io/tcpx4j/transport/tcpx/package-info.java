/** transport-tcpx (work in progress). */
package io.tcpx4j.transport.tcpx;
