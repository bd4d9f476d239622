package io.qkcm.controller.podautoscaler.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * What the metrics client makes of a metrics API that answers 200 with garbage: every shape client-go's
 * typed decode would refuse is a fetch error (the HPA's FailedGet*Metric), never an exception escaping
 * the sync and never an empty answer read as "no metrics". A plain HTTP server stands in for the
 * aggregated API (the API server only proxies the body); hack/e2e-hpa.sh shows the same through a
 * real API server's aggregation layer.
 */
class RestMetricsClientTest {

    private static final String NOW = "2026-11-27T08:00:00Z";
    private static final String RESOURCE_PREFIX = "unable to fetch metrics from resource metrics API: ";

    private final AtomicReference<String> body = new AtomicReference<>();
    private HttpServer http;
    private KubernetesClient client;
    private RestMetricsClient metrics;

    @BeforeEach
    void serve() throws Exception {
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/", exchange -> {
            byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        http.start();
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + http.getAddress().getPort())
                .withRequestRetryBackoffLimit(0).withRequestTimeout(10_000).build();
        client = new KubernetesClientBuilder().withConfig(config).build();
        metrics = new RestMetricsClient(client, (apiVersion, kind) -> "deployments.apps");
    }

    @AfterEach
    void stop() {
        client.close();
        http.stop(0);
    }

    private static String podMetrics(String items) {
        return "{\"kind\":\"PodMetricsList\",\"apiVersion\":\"metrics.k8s.io/v1beta1\",\"metadata\":{},\"items\":" + items + "}";
    }

    private static String pod(String cpu, String timestamp) {
        return "{\"metadata\":{\"name\":\"web-1\",\"namespace\":\"ns\"},\"timestamp\":\"" + timestamp
                + "\",\"window\":\"15s\",\"containers\":[{\"name\":\"web\",\"usage\":{\"cpu\":\"" + cpu + "\"}}]}";
    }

    /** Each with client-go's error text, as upstream's HPA puts it in its event and condition. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "a body that is not JSON  | <html>metrics are on holiday</html>                | couldn't get version/kind; json parse error: invalid character '<' looking for beginning of value",
            "an empty body            | ``                                                 | couldn't get version/kind; json parse error: unexpected end of JSON input",
            "a JSON array             | []                                                 | json: cannot unmarshal array into Go value of type v1beta1.PodMetricsList",
            "a JSON string            | \"metrics\"                                        | json: cannot unmarshal string into Go value of type v1beta1.PodMetricsList",
            "items that are a string  | {\"kind\":\"PodMetricsList\",\"items\":\"none\"} | json: cannot unmarshal string into Go struct field PodMetricsList.items of type []v1beta1.PodMetrics",
            "an item that is a number | {\"kind\":\"PodMetricsList\",\"items\":[5]}     | json: cannot unmarshal number into Go struct field PodMetricsList.items of type v1beta1.PodMetrics",
    })
    void aResponseOfTheWrongShapeIsAFetchError(String name, String response, String error) {
        body.set(response == null ? "" : response);
        Throwable t = catchThrowable(() -> metrics.getResourceMetric("cpu", "ns", "app=web", ""));
        assertThat(t).isInstanceOf(MetricsException.class).hasMessage(RESOURCE_PREFIX + error);
    }

    @Test
    void aTruncatedBodyIsAParseErrorOnOneLine() {
        body.set("{\"kind\":\"PodMetricsList\",\"items\":[");
        Throwable t = catchThrowable(() -> metrics.getResourceMetric("cpu", "ns", "app=web", ""));
        assertThat(t).isInstanceOf(MetricsException.class)
                .hasMessageStartingWith(RESOURCE_PREFIX + "couldn't get version/kind; json parse error: ");
        assertThat(t.getMessage()).doesNotContain("\n");
    }

    @Test
    void aUsageThatIsNotAQuantityIsAFetchError() {
        body.set(podMetrics("[" + pod("lots", NOW) + "]"));
        Throwable t = catchThrowable(() -> metrics.getResourceMetric("cpu", "ns", "app=web", ""));
        String upstream = RESOURCE_PREFIX + "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
        assertThat(t).isInstanceOf(MetricsException.class).hasMessage(upstream);
        // the container path reads the same quantity
        t = catchThrowable(() -> metrics.getResourceMetric("cpu", "ns", "app=web", "web"));
        assertThat(t).isInstanceOf(MetricsException.class).hasMessage(upstream);
    }

    @Test
    void aTimestampThatIsNotATimeIsAFetchError() {
        body.set(podMetrics("[" + pod("100m", "yesterday") + "]"));
        Throwable t = catchThrowable(() -> metrics.getResourceMetric("cpu", "ns", "app=web", ""));
        assertThat(t).isInstanceOf(MetricsException.class).hasMessageStartingWith(RESOURCE_PREFIX);
    }

    @Test
    void anEmptyListIsNoMetricsAndAWellFormedOneIsRead() throws Exception {
        body.set(podMetrics("[]"));
        assertThat(catchThrowable(() -> metrics.getResourceMetric("cpu", "ns", "app=web", "")))
                .isInstanceOf(MetricsException.class).hasMessage("no metrics returned from resource metrics API");
        body.set(podMetrics("[" + pod("250m", NOW) + "]"));
        MetricsClient.PodMetrics read = metrics.getResourceMetric("cpu", "ns", "app=web", "");
        assertThat(read.metrics()).containsOnlyKeys("web-1");
        assertThat(read.metrics().get("web-1").value()).isEqualTo(250);
    }

    @Test
    void customAndExternalValuesThatAreNotQuantitiesAreFetchErrors() {
        body.set("{\"kind\":\"MetricValueList\",\"items\":[{\"describedObject\":{\"name\":\"web-1\"},\"timestamp\":\"" + NOW
                + "\",\"value\":\"many\"}]}");
        assertThat(catchThrowable(() -> metrics.getRawMetric("qps", "ns", "app=web", "")))
                .isInstanceOf(MetricsException.class)
                .hasMessageStartingWith("unable to fetch metrics from custom metrics API: quantities must match");
        assertThat(catchThrowable(() -> metrics.getObjectMetric("qps", "ns",
                new io.fabric8.kubernetes.api.model.autoscaling.v2.CrossVersionObjectReference("apps/v1", "Deployment", "web"), "")))
                .isInstanceOf(MetricsException.class)
                .hasMessageStartingWith("unable to fetch metrics from custom metrics API: quantities must match");
        body.set("{\"kind\":\"ExternalMetricValueList\",\"items\":{\"value\":\"1\"}}");
        assertThat(catchThrowable(() -> metrics.getExternalMetric("queue", "ns", "")))
                .isInstanceOf(MetricsException.class)
                .hasMessage("unable to fetch metrics from external metrics API: json: cannot unmarshal object into Go struct field "
                        + "ExternalMetricValueList.items of type []v1beta1.ExternalMetricValue");
        body.set("{\"kind\":\"ExternalMetricValueList\",\"items\":[{\"timestamp\":\"" + NOW + "\",\"value\":\"plenty\"}]}");
        assertThat(catchThrowable(() -> metrics.getExternalMetric("queue", "ns", "")))
                .isInstanceOf(MetricsException.class)
                .hasMessageStartingWith("unable to fetch metrics from external metrics API: quantities must match");
    }
}
