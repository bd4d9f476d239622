package io.qkcm.controller.podautoscaler.metrics;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.autoscaling.v2.CrossVersionObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.options.GoDuration;

/**
 * Upstream's REST metrics client (metrics/client.go) over the controller's own client: plain GETs of the
 * aggregated APIs metrics.k8s.io/v1beta1, custom.metrics.k8s.io/v1beta2 and external.metrics.k8s.io/v1beta1,
 * read as JSON trees (no model classes needed for three small list types).
 */
public final class RestMetricsClient implements MetricsClient {

    private static final Logger LOG = Logger.getLogger(RestMetricsClient.class);

    /** Upstream's metricServerDefaultMetricWindow: the window of a custom metric that names none. */
    static final Duration DEFAULT_METRIC_WINDOW = Duration.ofMinutes(1);

    /** The custom metrics API's name of an object's kind: its group resource ("deployments.apps"). */
    @FunctionalInterface
    public interface ResourceMapper {
        String groupResource(String apiVersion, String kind) throws Exception;
    }

    private final KubernetesClient client;
    private final ResourceMapper mapper;

    public RestMetricsClient(KubernetesClient client, ResourceMapper mapper) {
        this.client = client;
        this.mapper = mapper;
    }

    @Override
    public PodMetrics getResourceMetric(String resource, String namespace, String selector, String container)
            throws MetricsException {
        JsonNode list;
        try {
            list = get("/apis/metrics.k8s.io/v1beta1/namespaces/" + namespace + "/pods", "pods.metrics.k8s.io",
                    Map.of("labelSelector", selector));
        } catch (MetricsException e) {
            throw new MetricsException("unable to fetch metrics from resource metrics API: " + e.getMessage());
        }
        JsonNode items = items(list, "resource metrics API");
        if (items.size() == 0) {
            throw new MetricsException("no metrics returned from resource metrics API");
        }
        try {
            Map<String, PodMetric> res = container.isEmpty() ? podMetrics(items, resource) : containerMetrics(items, resource, container);
            return new PodMetrics(res, time(items.get(0).path("timestamp")));
        } catch (RuntimeException e) {
            throw undecodable("resource metrics API", e);
        }
    }

    /** Upstream's getPodMetrics: a pod lacking the resource in any container has no metric. */
    public static Map<String, PodMetric> podMetrics(JsonNode items, String resource) {
        Map<String, PodMetric> res = new HashMap<>();
        for (JsonNode m : items) {
            JsonNode containers = m.path("containers");
            boolean missing = containers.size() == 0;
            long sum = 0;
            for (JsonNode c : containers) {
                JsonNode value = c.path("usage").get(resource);
                if (value == null || value.isNull()) {
                    missing = true;
                    LOG.debugf("Missing resource metric %s of pod %s/%s", resource,
                            m.path("metadata").path("namespace").asText(), m.path("metadata").path("name").asText());
                    break;
                }
                sum += milliValue(value.asText());
            }
            if (!missing) {
                res.put(m.path("metadata").path("name").asText(),
                        new PodMetric(time(m.path("timestamp")), window(m.path("window")), sum));
            }
        }
        return res;
    }

    /** Upstream's getContainerMetrics: only the named container counts. */
    public static Map<String, PodMetric> containerMetrics(JsonNode items, String resource, String container) {
        Map<String, PodMetric> res = new HashMap<>();
        for (JsonNode m : items) {
            boolean found = false;
            for (JsonNode c : m.path("containers")) {
                if (container.equals(c.path("name").asText())) {
                    found = true;
                    JsonNode value = c.path("usage").get(resource);
                    if (value != null && !value.isNull()) {
                        res.put(m.path("metadata").path("name").asText(), new PodMetric(time(m.path("timestamp")),
                                window(m.path("window")), milliValue(value.asText())));
                    }
                    break;
                }
            }
            if (!found) {
                LOG.debugf("Missing container metric %s of pod %s/%s", container,
                        m.path("metadata").path("namespace").asText(), m.path("metadata").path("name").asText());
            }
        }
        return res;
    }

    @Override
    public PodMetrics getRawMetric(String metricName, String namespace, String selector, String metricSelector)
            throws MetricsException {
        JsonNode list;
        try {
            Map<String, String> query = new HashMap<>();
            query.put("labelSelector", selector);
            if (!metricSelector.isEmpty()) {
                query.put("metricLabelSelector", metricSelector);
            }
            list = getCustom("/namespaces/" + namespace + "/pods/*/" + metricName, "pods.custom.metrics.k8s.io", query);
        } catch (MetricsException e) {
            throw new MetricsException("unable to fetch metrics from custom metrics API: " + e.getMessage());
        }
        JsonNode items = items(list, "custom metrics API");
        if (items.size() == 0) {
            throw new MetricsException("no metrics returned from custom metrics API");
        }
        try {
            Map<String, PodMetric> res = new HashMap<>();
            for (JsonNode m : items) {
                Duration window = m.hasNonNull("windowSeconds") ? Duration.ofSeconds(m.get("windowSeconds").asLong())
                        : DEFAULT_METRIC_WINDOW;
                res.put(m.path("describedObject").path("name").asText(),
                        new PodMetric(time(m.path("timestamp")), window, milliValue(m.path("value").asText())));
            }
            return new PodMetrics(res, time(items.get(0).path("timestamp")));
        } catch (RuntimeException e) {
            throw undecodable("custom metrics API", e);
        }
    }

    @Override
    public ObjectMetric getObjectMetric(String metricName, String namespace, CrossVersionObjectReference objectRef,
            String metricSelector) throws MetricsException {
        String apiVersion = objectRef.getApiVersion() == null ? "" : objectRef.getApiVersion();
        String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        Map<String, String> query = metricSelector.isEmpty() ? Map.of() : Map.of("metricLabelSelector", metricSelector);
        JsonNode value;
        try {
            String path;
            if ("Namespace".equals(objectRef.getKind()) && group.isEmpty()) {
                path = "/namespaces/" + namespace + "/metrics/" + metricName;
            } else {
                String resource;
                try {
                    resource = mapper.groupResource(apiVersion, objectRef.getKind());
                } catch (Exception e) {
                    throw new MetricsException(e.getMessage());
                }
                path = "/namespaces/" + namespace + "/" + resource + "/" + objectRef.getName() + "/" + metricName;
            }
            JsonNode list = getCustom(path, "custom.metrics.k8s.io", query);
            JsonNode items = items(list, null);
            if (items.size() != 1) {
                throw new MetricsException("the custom metrics API server returned " + items.size()
                        + " results when only one was requested");
            }
            value = items.get(0);
        } catch (MetricsException e) {
            throw new MetricsException("unable to fetch metrics from custom metrics API: " + e.getMessage());
        }
        try {
            return new ObjectMetric(milliValue(value.path("value").asText()), time(value.path("timestamp")));
        } catch (RuntimeException e) {
            throw undecodable("custom metrics API", e);
        }
    }

    @Override
    public ExternalMetrics getExternalMetric(String metricName, String namespace, String selector)
            throws MetricsException {
        JsonNode list;
        try {
            list = get("/apis/external.metrics.k8s.io/v1beta1/namespaces/" + namespace + "/" + metricName,
                    metricName + ".external.metrics.k8s.io", Map.of("labelSelector", selector));
        } catch (MetricsException e) {
            throw new MetricsException("unable to fetch metrics from external metrics API: " + e.getMessage());
        }
        JsonNode items = items(list, "external metrics API");
        if (items.size() == 0) {
            throw new MetricsException("no metrics returned from external metrics API");
        }
        try {
            List<Long> values = new ArrayList<>();
            for (JsonNode m : items) {
                values.add(milliValue(m.path("value").asText()));
            }
            return new ExternalMetrics(values, time(items.get(0).path("timestamp")));
        } catch (RuntimeException e) {
            throw undecodable("external metrics API", e);
        }
    }

    /**
     * The list's items, as client-go's typed decode would accept them: a response that is not an object, or
     * whose items is not a list, is a decode error (upstream's List call fails), not an empty answer.
     * {@code api} prefixes the error as the fetch's own errors are; null leaves it to the caller.
     */
    static JsonNode items(JsonNode list, String api) throws MetricsException {
        String type = LIST_TYPES.getOrDefault(api == null ? "custom metrics API" : api, "List");
        String problem = null;
        if (list == null || !list.isObject()) {
            problem = "json: cannot unmarshal " + goType(list) + " into Go value of type " + type;
        } else if (list.has("items") && !list.get("items").isArray() && !list.get("items").isNull()) {
            problem = "json: cannot unmarshal " + goType(list.get("items")) + " into Go struct field "
                    + type.substring(type.lastIndexOf('.') + 1) + ".items of type []" + ITEM_TYPES.get(type);
        } else {
            for (JsonNode item : list.path("items")) {
                if (!item.isObject() && !item.isNull()) {
                    problem = "json: cannot unmarshal " + goType(item) + " into Go struct field "
                            + type.substring(type.lastIndexOf('.') + 1) + ".items of type " + ITEM_TYPES.get(type);
                    break;
                }
            }
        }
        if (problem != null) {
            throw new MetricsException(api == null ? problem : "unable to fetch metrics from " + api + ": " + problem);
        }
        return list.path("items");
    }

    /** The Go list type each API decodes into, and its item type: encoding/json names them in its errors. */
    private static final Map<String, String> LIST_TYPES = Map.of(
            "resource metrics API", "v1beta1.PodMetricsList",
            "custom metrics API", "v1beta2.MetricValueList",
            "external metrics API", "v1beta1.ExternalMetricValueList");
    private static final Map<String, String> ITEM_TYPES = Map.of(
            "v1beta1.PodMetricsList", "v1beta1.PodMetrics",
            "v1beta2.MetricValueList", "v1beta2.MetricValue",
            "v1beta1.ExternalMetricValueList", "v1beta1.ExternalMetricValue");

    /** encoding/json's name of a JSON value's kind in an UnmarshalTypeError. */
    private static String goType(JsonNode node) {
        if (node == null || node.isMissingNode() || node.isNull()) {
            return "null";
        }
        if (node.isTextual()) {
            return "string";
        }
        if (node.isNumber()) {
            return "number";
        }
        if (node.isBoolean()) {
            return "bool";
        }
        return node.isArray() ? "array" : "object";
    }

    /** A value the typed decode would have refused (a quantity, a time, a duration): the fetch fails. */
    private static MetricsException undecodable(String api, RuntimeException e) {
        return new MetricsException("unable to fetch metrics from " + api + ": " + e.getMessage());
    }


    /** The custom metrics API's versions, preferred first (upstream's client discovers which are served). */
    private static final List<String> CUSTOM_VERSIONS = List.of("v1beta2", "v1beta1");

    /**
     * GET of the custom metrics API at the first of its versions that is served: a 404 that is not a
     * Status (the group version does not exist) moves on to the next version. The fields read here
     * (describedObject, value, timestamp, windowSeconds) are the same in both.
     */
    private JsonNode getCustom(String path, String resource, Map<String, String> query) throws MetricsException {
        MetricsException first = null;
        for (String version : CUSTOM_VERSIONS) {
            try {
                return get("/apis/custom.metrics.k8s.io/" + version + path, resource, query);
            } catch (NotServed e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        throw first;
    }

    /** A 404 without a Status: no API serves the path. */
    private static final class NotServed extends MetricsException {
        NotServed(String message) {
            super(message);
        }
    }

    /** GET {@code path}; an error says what client-go's would ({@code resource} names what was asked for). */
    private JsonNode get(String path, String resource, Map<String, String> query) throws MetricsException {
        StringBuilder url = new StringBuilder(client.getMasterUrl().toString().replaceAll("/+$", "")).append(path);
        char sep = '?';
        for (Map.Entry<String, String> q : query.entrySet()) {
            if (q.getValue() == null || q.getValue().isEmpty()) {
                continue;
            }
            url.append(sep).append(q.getKey()).append('=').append(URLEncoder.encode(q.getValue(), StandardCharsets.UTF_8));
            sep = '&';
        }
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(url.toString()).build();
        HttpResponse<String> response;
        try {
            response = client.getHttpClient().sendAsync(request, String.class).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MetricsException("interrupted");
        } catch (ExecutionException e) {
            throw new MetricsException(String.valueOf(e.getCause() == null ? e : e.getCause().getMessage()));
        } catch (TimeoutException e) {
            throw new MetricsException("the server was unable to return a response in the time allotted (get " + resource + ")");
        }
        String body = response.body();
        if (response.code() >= 200 && response.code() < 300) {
            try {
                JsonNode tree = Json.mapper().readTree(body == null ? "" : body);
                if (tree == null || tree.isMissingNode()) {
                    throw new MetricsException("couldn't get version/kind; json parse error: unexpected end of JSON input");
                }
                return tree;
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new MetricsException("couldn't get version/kind; json parse error: " + jsonParseError(body, e));
            } catch (java.io.IOException | RuntimeException e) {
                throw new MetricsException("couldn't get version/kind; json parse error: " + e.getMessage());
            }
        }
        String message = statusError(response.code(), body, resource);
        if (response.code() == 404 && message.startsWith("the server could not find the requested resource")) {
            throw new NotServed(message);
        }
        throw new MetricsException(message);
    }

    /**
     * encoding/json's text for the commonest garbage, a body that does not start as JSON; otherwise the
     * parser's own message, without its multi-line source excerpt (it ends up in an event).
     */
    static String jsonParseError(String body, com.fasterxml.jackson.core.JsonProcessingException e) {
        String text = body == null ? "" : body.stripLeading();
        if (text.isEmpty()) {
            return "unexpected end of JSON input";
        }
        char c = text.charAt(0);
        if ("{[\"-0123456789tfn".indexOf(c) < 0) {
            return "invalid character '" + c + "' looking for beginning of value";
        }
        return e.getOriginalMessage();
    }

    /**
     * client-go's error text for a failed request: a Status body's message; otherwise the generic server
     * response of the code (as for the 404 of an API group nobody serves).
     */
    static String statusError(int code, String body, String resource) {
        try {
            JsonNode status = Json.mapper().readTree(body);
            if (status != null && "Status".equals(status.path("kind").asText()) && status.hasNonNull("message")
                    && !status.get("message").asText().isEmpty()) {
                return status.get("message").asText();
            }
        } catch (java.io.IOException | RuntimeException ignored) {
            // not a Status: the generic message below
        }
        String suffix = " (get " + resource + ")";
        return switch (code) {
            case 401 -> "Unauthorized";
            case 403 -> "forbidden: User cannot get resource" + suffix;
            case 404 -> "the server could not find the requested resource" + suffix;
            case 429 -> "the server has received too many requests and has asked us to try again later" + suffix;
            case 503 -> "the server is currently unable to handle the request" + suffix;
            case 504 -> "the server was unable to return a response in the time allotted, but may still be processing the request" + suffix;
            default -> "an error on the server (\"" + (body == null ? "" : body.strip()) + "\") has prevented the request from succeeding" + suffix;
        };
    }

    /**
     * Quantity's MilliValue, parsed as resource.ParseQuantity does (the kit's GoQuantity): a text that is
     * not a quantity fails with apimachinery's own error (ErrFormatWrong, ...), as the typed decode would.
     */
    public static long milliValue(String quantity) {
        if (quantity == null || quantity.isEmpty()) {
            return 0;
        }
        return GoQuantity.parse(quantity).milliValue();
    }

    private static Instant time(JsonNode node) {
        return node == null || node.isNull() || node.asText().isEmpty() ? Instant.EPOCH : Instant.parse(node.asText());
    }

    private static Duration window(JsonNode node) {
        return node == null || node.isNull() || node.asText().isEmpty() ? Duration.ZERO : GoDuration.parse(node.asText());
    }
}
