/** inject (work in progress). */
package io.tcpx4j.inject;
