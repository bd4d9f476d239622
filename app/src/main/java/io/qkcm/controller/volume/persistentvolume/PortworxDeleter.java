package io.qkcm.controller.volume.persistentvolume;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.Json;

/**
 * The in-tree Portworx plugin's deleter (pkg/volume/portworx, v1.34: still registered in the binder, as
 * InTreePluginPortworxUnregister is off; a dynamically provisioned Portworx PV is migrated to
 * pxd.portworx.com and never reaches it, a static one with the Delete policy does). Delete talks to the
 * Portworx (openstorage) REST API: a client is valid when {@code GET /v1/osd-volumes/versions} answers; the
 * first try is this host's port 9001 (the binder's volume host has no name, which Go dials as the local
 * host), then the {@code kube-system/portworx-service} Service's cluster IP on 9001; the volume goes with
 * {@code DELETE /v1/osd-volumes/<volumeID>}, whose answer's {@code error} fails it. The errors are those of
 * the openstorage client and the Service lookup, so a cluster without Portworx gets
 * {@code services "portworx-service" not found}.
 */
final class PortworxDeleter {

    static final String PLUGIN_NAME = "kubernetes.io/portworx-volume";
    /** osdMgmtDefaultPort. */
    static final int OSD_MGMT_DEFAULT_PORT = 9001;
    static final String PX_SERVICE_NAME = "portworx-service";
    /** The openstorage client's dial timeout and response timeout. */
    private static final Duration DIAL_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration RESPONSE_TIMEOUT = Duration.ofMinutes(5);

    private static final Logger LOG = Logger.getLogger(PortworxDeleter.class);

    private final KubernetesClient client;
    /** The local endpoint's port: 9001, a test's own port in tests. */
    private final int localPort;
    private final HttpClient http;
    /** util.portworxClient: the last valid endpoint, checked again before each use. */
    private String endpoint;

    PortworxDeleter(KubernetesClient client, int localPort) {
        this.client = client;
        this.localPort = localPort;
        this.http = HttpClient.newBuilder().connectTimeout(DIAL_TIMEOUT).version(HttpClient.Version.HTTP_1_1).build();
    }

    /** portworxVolumeDeleter.Delete → portworxVolumeUtil.DeleteVolume. */
    synchronized void delete(PersistentVolume volume) throws IOException {
        if (volume.getSpec().getPortworxVolume() == null) {
            throw new IllegalStateException("spec.PersistentVolumeSource.PortworxVolume is nil");
        }
        String volumeID = volume.getSpec().getPortworxVolume().getVolumeID();
        String base;
        try {
            base = portworxDriver();
        } catch (IOException | RuntimeException e) {
            LOG.errorf("Failed to get portworx driver. Err: %s", e.getMessage());
            throw e;
        }
        try {
            JsonNode response = call("DELETE", base, "/v1/osd-volumes/" + (volumeID == null ? "" : volumeID));
            String error = response == null || response.get("error") == null ? "" : response.get("error").asText("");
            if (!error.isEmpty()) {
                throw new IOException(error);
            }
        } catch (IOException e) {
            LOG.errorf("Error deleting Portworx Volume (%s): %s", volume.getMetadata().getName(), e.getMessage());
            throw e;
        }
    }

    /** getPortworxDriver: the saved endpoint if still valid, the local one, else the Service's. */
    private String portworxDriver() throws IOException {
        if (endpoint != null && valid(endpoint) == null) {
            return endpoint;
        }
        String local = "http://" + hostPort("", localPort);
        if (valid(local) == null) {
            endpoint = local;
            LOG.infof("Using portworx service at: :%d as api endpoint", localPort);
            return endpoint;
        }
        Service svc;
        try {
            svc = client.services().inNamespace("kube-system").withName(PX_SERVICE_NAME).get();
        } catch (RuntimeException e) {
            LOG.errorf("Failed to get service. Err: %s", ApiErrors.message(e));
            throw new IOException(ApiErrors.message(e), e);
        }
        if (svc == null) {
            LOG.errorf("Failed to get service. Err: services \"%s\" not found", PX_SERVICE_NAME);
            throw new IOException("services \"" + PX_SERVICE_NAME + "\" not found");
        }
        String clusterIP = svc.getSpec() == null || svc.getSpec().getClusterIP() == null ? "" : svc.getSpec().getClusterIP();
        String remote = "http://" + hostPort(clusterIP, OSD_MGMT_DEFAULT_PORT);
        IOException invalid = valid(remote);
        if (invalid != null) {
            LOG.errorf("Failed to connect to portworx service. Err: %s", invalid.getMessage());
            endpoint = null;
            throw invalid;
        }
        endpoint = remote;
        LOG.infof("Using portworx cluster service at: %s:%d as api endpoint", clusterIP, OSD_MGMT_DEFAULT_PORT);
        return endpoint;
    }

    /** net.JoinHostPort. */
    private static String hostPort(String host, int port) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    /** isClientValid: null when the versions call answers, else its error. */
    private IOException valid(String base) {
        try {
            call("GET", base, "/v1/osd-volumes/versions");
            return null;
        } catch (IOException e) {
            return e;
        }
    }

    /**
     * The openstorage client's Request.Do and Unmarshal: a status outside 200..206 is {@code HTTP error <code>};
     * the body is JSON (null for an empty one).
     */
    private JsonNode call(String verb, String base, String path) throws IOException {
        String url = base + path;
        // Go dials an empty host as the local one
        URI uri = URI.create(url.startsWith("http://:") ? "http://localhost" + url.substring("http://".length()) : url);
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(RESPONSE_TIMEOUT).header("Content-Type", "application/json")
                .header("User-Agent", "pxd-sched/v1").method(verb, HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (HttpConnectTimeoutException e) {
            throw new IOException(goVerb(verb) + " \"" + url + "\": dial tcp " + url.substring("http://".length(),
                    url.indexOf('/', "http://".length())) + ": i/o timeout", e);
        } catch (ConnectException e) {
            throw new IOException(goVerb(verb) + " \"" + url + "\": dial tcp " + url.substring("http://".length(),
                    url.indexOf('/', "http://".length())) + ": connect: connection refused", e);
        } catch (HttpTimeoutException e) {
            throw new IOException(goVerb(verb) + " \"" + url + "\": context deadline exceeded (Client.Timeout exceeded "
                    + "while awaiting headers)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        int code = response.statusCode();
        if (code < 200 || code > 206) {
            throw new IOException("HTTP error " + code);
        }
        String body = response.body();
        if (body == null || body.isBlank()) {
            throw new IOException("unexpected end of JSON input");
        }
        try {
            return Json.mapper().readTree(body);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException("invalid character '" + body.strip().charAt(0) + "' looking for beginning of value", e);
        }
    }

    /** net/http's error prefix: the method as Go's url.Error names it. */
    private static String goVerb(String verb) {
        return verb.charAt(0) + verb.substring(1).toLowerCase();
    }
}
