package io.tcpx4j.cli;

import java.util.Objects;

/**
 * One finding of {@code tcpx4j doctor}.
 *
 * @param name     short topic, e.g. {@code java}, {@code tcpx}, {@code nccl-env}
 * @param status   OK, INFO (a fact), WARN (works, but likely slower or fragile) or FAIL
 * @param detail   what was found
 * @param fix      what to do about it, or null
 * @param blocking whether a FAIL stops the selected transport and memory from working
 */
record Check(String name, Status status, String detail, String fix, boolean blocking) {

    enum Status { OK, INFO, WARN, FAIL }

    Check {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(detail, "detail");
    }

    static Check ok(String name, String detail) {
        return new Check(name, Status.OK, detail, null, false);
    }

    static Check info(String name, String detail) {
        return new Check(name, Status.INFO, detail, null, false);
    }

    static Check warn(String name, String detail, String fix) {
        return new Check(name, Status.WARN, detail, fix, false);
    }

    static Check fail(String name, String detail, String fix, boolean blocking) {
        return new Check(name, Status.FAIL, detail, fix, blocking);
    }

    @com.fasterxml.jackson.annotation.JsonIgnore
    boolean blocks() {
        return status == Status.FAIL && blocking;
    }
}
