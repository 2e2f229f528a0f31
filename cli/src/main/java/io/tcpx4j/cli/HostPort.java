package io.tcpx4j.cli;

import picocli.CommandLine;

import java.net.InetSocketAddress;

/**
 * A {@code host:port} pair as given on the command line ({@code [v6addr]:port} for IPv6). Port 0
 * means "pick a free one" where listening.
 */
record HostPort(String host, int port) {

    HostPort {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("empty host");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is not 0..65535");
        }
    }

    static HostPort parse(String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("'" + text + "' is not host:port");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.contains(":")) {
            throw new IllegalArgumentException("'" + text + "': write IPv6 addresses as [addr]:port");
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "': port is not a number");
        }
        return new HostPort(host, port);
    }

    static HostPort of(InetSocketAddress a) {
        return new HostPort(a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString(), a.getPort());
    }

    InetSocketAddress toAddress() {
        return new InetSocketAddress(host, port);
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    /** picocli converter. */
    static final class Converter implements CommandLine.ITypeConverter<HostPort> {
        @Override
        public HostPort convert(String value) {
            try {
                return parse(value.trim());
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
