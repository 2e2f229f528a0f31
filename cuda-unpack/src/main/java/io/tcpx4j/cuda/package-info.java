/** cuda-unpack (work in progress). */
package io.tcpx4j.cuda;
