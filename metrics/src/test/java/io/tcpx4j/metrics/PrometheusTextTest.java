package io.tcpx4j.metrics;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The test parser reads the format and refuses what the format does not allow. */
class PrometheusTextTest {

    @Test
    void readsTypesSamplesLabelsAndEscapes() {
        PrometheusText t = PrometheusText.parse("""
                # HELP x_total a counter
                # TYPE x_total counter
                x_total{peer="a\\"b",op="write"} 3.0
                # TYPE lat_seconds histogram
                lat_seconds_bucket{le="+Inf"} 2
                lat_seconds_count 2
                up 1 1700000000000
                """);
        assertThat(t.type("x_total")).isEqualTo("counter");
        assertThat(t.type("lat_seconds")).isEqualTo("histogram");
        assertThat(t.find("x_total", "peer", "a\"b").get(0).value()).isEqualTo(3.0);
        assertThat(t.find("lat_seconds_bucket", "le", "+Inf").get(0).value()).isEqualTo(2.0);
        assertThat(t.sum("up")).isEqualTo(1.0);
        assertThat(t.find("x_total", "peer", "other")).isEmpty();
    }

    @Test
    void computesHistogramQuantilesAsPrometheusDoes() {
        PrometheusText t = PrometheusText.parse("""
                # TYPE l histogram
                l_bucket{le="1.0"} 50
                l_bucket{le="2.0"} 90
                l_bucket{le="4.0"} 100
                l_bucket{le="+Inf"} 100
                """);
        assertThat(t.histogramQuantile(0.5, "l")).isEqualTo(1.0);
        assertThat(t.histogramQuantile(0.7, "l")).isEqualTo(1.5);
        assertThat(t.histogramQuantile(0.95, "l")).isEqualTo(3.0);
        assertThat(t.upperBound("l", 1.5)).isEqualTo(2.0);
        assertThatThrownBy(() -> PrometheusText.parse("l_bucket{le=\"1\"} 5\nl_bucket{le=\"+Inf\"} 4\n")
                .histogramQuantile(0.5, "l")).hasMessageContaining("not cumulative");
    }

    @Test
    void refusesMalformedLines() {
        for (String bad : new String[] {"x_total", "x_total{peer=a} 1", "x_total{peer=\"a} 1", "x_total{p=\"\\t\"} 1",
                "x_total one", "{a=\"b\"} 1", "x{a=\"1\",a=\"2\"} 1", "x_total 1 2 3",
                "x_total 1\n# TYPE x_total counter", "# TYPE x counters"}) {
            assertThatThrownBy(() -> PrometheusText.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
