package io.tcpx4j.cli.fleet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The etcd gateway client against a real etcd. */
@Timeout(120)
class EtcdClientTest {

    @RegisterExtension
    static final LocalEtcd.PerClass etcd = new LocalEtcd.PerClass();

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void putGetAndRangeByPrefix() throws IOException {
        EtcdClient c = etcd.client();
        c.put("t1/b", utf8("2"), 0);
        c.put("t1/a", utf8("1"), 0);
        c.put("t10/x", utf8("other prefix"), 0);
        assertThat(c.get("t1/a")).map(EtcdClient.KeyValue::text).contains("1");
        assertThat(c.get("t1/missing")).isEmpty();
        List<EtcdClient.KeyValue> kvs = c.range("t1/");
        assertThat(kvs).extracting(EtcdClient.KeyValue::key).containsExactly("t1/a", "t1/b");
        assertThat(kvs.get(0).createRevision()).isGreaterThan(kvs.get(1).createRevision());
        assertThat(c.deletePrefix("t1/")).isEqualTo(2);
        assertThat(c.range("t1/")).isEmpty();
        assertThat(c.range("t10/")).hasSize(1);
    }

    @Test
    void putIfAbsentCreatesOnce() throws IOException {
        EtcdClient c = etcd.client();
        assertThat(c.putIfAbsent("t2/k", utf8("first"), 0)).isTrue();
        assertThat(c.putIfAbsent("t2/k", utf8("second"), 0)).isFalse();
        assertThat(c.get("t2/k")).map(EtcdClient.KeyValue::text).contains("first");
    }

    @Test
    void revokingALeaseDeletesItsKeysAndEndsIt() throws IOException {
        EtcdClient c = etcd.client();
        long lease = c.grant(30);
        c.put("t3/leased", utf8("x"), lease);
        c.put("t3/kept", utf8("y"), 0);
        assertThat(c.keepAlive(lease)).isTrue();
        c.revoke(lease);
        assertThat(c.range("t3/")).extracting(EtcdClient.KeyValue::key).containsExactly("t3/kept");
        assertThat(c.keepAlive(lease)).isFalse();
        c.revoke(lease); // gone already: no error
        assertThatThrownBy(() -> c.put("t3/late", utf8("z"), lease)).isInstanceOf(EtcdClient.EtcdException.class)
                .hasMessageContaining("lease not found");
    }

    @Test
    void anUnreachableEndpointIsSkippedAndAllUnreachableAreNamed() throws IOException {
        URI dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = URI.create("http://127.0.0.1:" + s.getLocalPort());
        }
        EtcdClient both = new EtcdClient(List.of(dead, etcd.url()), Duration.ofSeconds(5));
        both.put("t4/k", utf8("v"), 0);
        assertThat(both.get("t4/k")).isPresent();
        EtcdClient none = new EtcdClient(List.of(dead), Duration.ofSeconds(5));
        assertThatThrownBy(() -> none.get("t4/k")).isInstanceOf(IOException.class)
                .hasMessageContaining("cannot reach etcd").hasMessageContaining(dead.toString());
    }

    @Test
    void endpointsParseWithOrWithoutScheme() {
        assertThat(EtcdClient.parseEndpoints("http://10.0.0.1:2379,etcd-b:2379"))
                .containsExactly(URI.create("http://10.0.0.1:2379"), URI.create("http://etcd-b:2379"));
        for (String bad : List.of("", "http://host", "ftp://h:1", "http://h:2379/v3", "h:2379,")) {
            assertThatThrownBy(() -> EtcdClient.parseEndpoints(bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an etcd URL");
        }
    }
}
