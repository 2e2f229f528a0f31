/** nixl-backend (work in progress). */
package io.tcpx4j.nixl;
