package io.tcpx4j.cli.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * The few etcd v3 calls a benchmark group needs, through etcd's JSON gateway: HTTP POSTs to
 * {@code /v3/kv/...} and {@code /v3/lease/...} whose keys and values travel base64-encoded (etcd 3.4
 * and later serve the gateway under {@code /v3/}). No etcd client library is involved.
 *
 * <p>With several endpoints a call goes to the one that answered last and moves on to the next
 * when one cannot be reached; a call that no endpoint answers fails with all of them named.
 *
 * <p>Thread-safe.
 */
public final class EtcdClient {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Base64.Encoder B64 = Base64.getEncoder();
    private static final Base64.Decoder B64D = Base64.getDecoder();

    /**
     * One key and its value.
     *
     * @param key            the key
     * @param value          its value
     * @param createRevision the store revision that created the key (keys created earlier have smaller ones)
     */
    public record KeyValue(String key, byte[] value, long createRevision) {

        /** The value as UTF-8 text. */
        public String text() {
            return new String(value, StandardCharsets.UTF_8);
        }
    }

    private final List<URI> endpoints;
    private final HttpClient http;
    private final Duration requestTimeout;
    private volatile int current;

    /**
     * @param endpoints      etcd client URLs ({@code http://host:port}), tried in order
     * @param requestTimeout longest wait for one answer
     */
    public EtcdClient(List<URI> endpoints, Duration requestTimeout) {
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("no etcd endpoint");
        }
        this.endpoints = List.copyOf(endpoints);
        this.requestTimeout = requestTimeout;
        this.http = HttpClient.newBuilder().connectTimeout(requestTimeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    /**
     * Parses {@code --etcd-endpoints}: comma-separated {@code http://host:port} URLs; a bare
     * {@code host:port} means {@code http://host:port}.
     *
     * @throws IllegalArgumentException naming the value that is not such a URL
     */
    public static List<URI> parseEndpoints(String csv) {
        List<URI> out = new ArrayList<>();
        for (String part : csv.split(",", -1)) {
            String p = part.strip();
            String url = p.contains("://") ? p : "http://" + p;
            URI u;
            try {
                u = new URI(url);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("'" + p + "' is not an etcd URL like http://HOST:2379");
            }
            if (p.isEmpty() || u.getHost() == null || u.getPort() < 1
                    || !("http".equals(u.getScheme()) || "https".equals(u.getScheme()))
                    || (u.getPath() != null && !u.getPath().isEmpty() && !"/".equals(u.getPath()))) {
                throw new IllegalArgumentException("'" + p + "' is not an etcd URL like http://HOST:2379");
            }
            out.add(URI.create(u.getScheme() + "://" + u.getRawAuthority()));
        }
        return out;
    }

    /** The endpoints, in the order they are tried. */
    public List<URI> endpoints() {
        return endpoints;
    }

    /** Grants a lease of {@code ttlSeconds}; its id. */
    public long grant(long ttlSeconds) throws IOException {
        ObjectNode body = JSON.createObjectNode().put("TTL", ttlSeconds);
        JsonNode r = call("/v3/lease/grant", body);
        long id = r.path("ID").asLong(0);
        if (id == 0) {
            throw new IOException("etcd granted no lease: " + r);
        }
        return id;
    }

    /** Renews a lease; false when it has expired (or was revoked). */
    public boolean keepAlive(long lease) throws IOException {
        JsonNode r = call("/v3/lease/keepalive", JSON.createObjectNode().put("ID", Long.toString(lease)));
        // an expired lease is answered with its id and no TTL (0 is left out of the JSON)
        return r.path("result").path("TTL").asLong(0) > 0;
    }

    /** Revokes a lease, deleting every key attached to it; a lease that is gone already is no error. */
    public void revoke(long lease) throws IOException {
        try {
            call("/v3/lease/revoke", JSON.createObjectNode().put("ID", Long.toString(lease)));
        } catch (EtcdException e) {
            if (!e.getMessage().contains("lease not found")) {
                throw e;
            }
        }
    }

    /** Puts {@code key}; attached to {@code lease} unless it is 0. */
    public void put(String key, byte[] value, long lease) throws IOException {
        call("/v3/kv/put", putBody(key, value, lease));
    }

    /** Creates {@code key} (attached to {@code lease} unless 0) only if it does not exist; whether it did. */
    public boolean putIfAbsent(String key, byte[] value, long lease) throws IOException {
        ObjectNode body = JSON.createObjectNode();
        ArrayNode compare = body.putArray("compare");
        compare.addObject().put("key", b64(key)).put("target", "CREATE").put("result", "EQUAL")
                .put("create_revision", "0");
        body.putArray("success").addObject().set("request_put", putBody(key, value, lease));
        return call("/v3/kv/txn", body).path("succeeded").asBoolean(false);
    }

    /** The value of {@code key}, if it exists. */
    public Optional<KeyValue> get(String key) throws IOException {
        List<KeyValue> kvs = kvs(call("/v3/kv/range", JSON.createObjectNode().put("key", b64(key))));
        return kvs.isEmpty() ? Optional.empty() : Optional.of(kvs.get(0));
    }

    /** Every key that starts with {@code prefix}, sorted by key. */
    public List<KeyValue> range(String prefix) throws IOException {
        ObjectNode body = JSON.createObjectNode().put("key", b64(prefix)).put("range_end", rangeEnd(prefix));
        return kvs(call("/v3/kv/range", body));
    }

    /** Deletes every key that starts with {@code prefix}; how many there were. */
    public long deletePrefix(String prefix) throws IOException {
        ObjectNode body = JSON.createObjectNode().put("key", b64(prefix)).put("range_end", rangeEnd(prefix));
        return call("/v3/kv/deleterange", body).path("deleted").asLong(0);
    }

    private static ObjectNode putBody(String key, byte[] value, long lease) {
        ObjectNode body = JSON.createObjectNode().put("key", b64(key)).put("value", B64.encodeToString(value));
        if (lease != 0) {
            body.put("lease", Long.toString(lease));
        }
        return body;
    }

    private static List<KeyValue> kvs(JsonNode r) {
        List<KeyValue> out = new ArrayList<>();
        for (JsonNode kv : r.path("kvs")) {
            out.add(new KeyValue(new String(B64D.decode(kv.path("key").asText()), StandardCharsets.UTF_8),
                    B64D.decode(kv.path("value").asText("")), kv.path("create_revision").asLong(0)));
        }
        return out;
    }

    private static String b64(String s) {
        return B64.encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** The key right after every key with {@code prefix}: the prefix with its last byte plus one. */
    private static String rangeEnd(String prefix) {
        byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
        int i = end.length - 1;
        while (i >= 0 && end[i] == (byte) 0xff) {
            i--;
        }
        if (i < 0) {
            return B64.encodeToString(new byte[] {0}); // every key
        }
        end = Arrays.copyOf(end, i + 1);
        end[i]++;
        return B64.encodeToString(end);
    }

    /** One gateway call; tries the endpoints from the last one that answered. */
    private JsonNode call(String path, ObjectNode body) throws IOException {
        byte[] json = JSON.writeValueAsBytes(body);
        int start = current;
        List<String> failures = new ArrayList<>();
        for (int k = 0; k < endpoints.size(); k++) {
            int i = (start + k) % endpoints.size();
            URI endpoint = endpoints.get(i);
            HttpRequest request = HttpRequest.newBuilder(endpoint.resolve(path)).timeout(requestTimeout)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(json)).build();
            HttpResponse<byte[]> response;
            try {
                response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            } catch (ConnectException | HttpConnectTimeoutException e) {
                failures.add(endpoint + ": cannot connect (" + (e.getMessage() != null ? e.getMessage() : e) + ")");
                continue;
            } catch (HttpTimeoutException e) {
                failures.add(endpoint + ": no answer within " + requestTimeout.toMillis() + " ms");
                continue;
            } catch (IOException e) {
                failures.add(endpoint + ": " + e);
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted during an etcd call to " + endpoint);
            }
            current = i;
            JsonNode answer;
            try {
                answer = JSON.readTree(response.body());
            } catch (IOException e) {
                throw new IOException("etcd at " + endpoint + " answered " + path + " with HTTP " + response.statusCode()
                        + " and no JSON (is this etcd's client URL?)", e);
            }
            if (response.statusCode() != 200) {
                String message = answer.path("message").asText(answer.path("error").asText(answer.toString()));
                if (response.statusCode() == 404 && answer.path("message").isMissingNode()) {
                    message = "no " + path + " here: etcd 3.4 or later serves its v3 JSON gateway there";
                }
                throw new EtcdException("etcd at " + endpoint + ": " + message);
            }
            return answer;
        }
        throw new IOException("cannot reach etcd: " + String.join("; ", failures));
    }

    /** An error etcd answered with (as opposed to not answering). */
    public static final class EtcdException extends IOException {
        private static final long serialVersionUID = 1L;

        EtcdException(String message) {
            super(message);
        }
    }
}
