/** cli (work in progress). */
package io.tcpx4j.cli;
