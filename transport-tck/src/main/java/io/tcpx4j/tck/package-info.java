/** transport-tck (work in progress). */
package io.tcpx4j.tck;
