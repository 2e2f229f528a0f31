package io.tcpx4j.transport.tcpx;

/**
 * The members of an ncclNet_vN_t function table, named by role. Which of them a version has, and
 * at which pointer-sized index, is {@link NetPluginVersion}'s business.
 */
enum NetSlot {
    /** {@code const char* name}. */
    NAME,
    INIT,
    DEVICES,
    GET_PROPERTIES,
    LISTEN,
    CONNECT,
    ACCEPT,
    REG_MR,
    /** Since v6; TCPX leaves it null. */
    REG_MR_DMA_BUF,
    DEREG_MR,
    ISEND,
    IRECV,
    /** Never called: TCPX must not be asked to flush. */
    IFLUSH,
    TEST,
    CLOSE_SEND,
    CLOSE_RECV,
    CLOSE_LISTEN,
    /** Since v7. */
    GET_DEVICE_MR,
    /** Since v7. */
    IRECV_CONSUMED
}
