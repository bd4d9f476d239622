package io.qkcm.controller.serviceaccount;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.URLUtils;

/** Secret helpers shared by the token controller and the legacy token cleaner. */
final class Secrets {

    static final String TYPE_SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token";
    static final String SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name";
    static final String SERVICE_ACCOUNT_UID_KEY = "kubernetes.io/service-account.uid";
    static final String TOKEN_KEY = "token";
    static final String ROOT_CA_KEY = "ca.crt";
    static final String NAMESPACE_KEY = "namespace";

    private Secrets() {
    }

    static String annotation(Secret s, String key) {
        Map<String, String> a = s.getMetadata().getAnnotations();
        return a == null ? null : a.get(key);
    }

    static byte[] data(Secret s, String key) {
        Map<String, String> d = s.getData();
        String v = d == null ? null : d.get(key);
        return v == null ? new byte[0] : Base64.getDecoder().decode(v);
    }

    static String encode(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    static String encode(String s) {
        return encode(s.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * DELETE with preconditions (uid and/or resourceVersion), which fabric8's DSL cannot express for
     * a uid. Returns normally on success; throws KubernetesClientException with the HTTP code otherwise.
     */
    static void deleteWithPreconditions(KubernetesClient client, String namespace, String name, String uid,
            String resourceVersion) {
        DeleteOptions opts = new DeleteOptions();
        opts.setApiVersion("v1");
        opts.setKind("DeleteOptions");
        if ((uid != null && !uid.isEmpty()) || resourceVersion != null) {
            Preconditions p = new Preconditions();
            if (uid != null && !uid.isEmpty()) {
                p.setUid(uid);
            }
            p.setResourceVersion(resourceVersion);
            opts.setPreconditions(p);
        }
        String url = URLUtils.join(client.getMasterUrl().toString(), "api", "v1", "namespaces", namespace,
                "secrets", name);
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(url)
                .delete("application/json", io.qkcm.runtime.Json.api().asJson(opts)).build();
        HttpResponse<String> response;
        try {
            response = client.getHttpClient().sendAsync(request, String.class).get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KubernetesClientException("interrupted deleting secret " + namespace + "/" + name);
        } catch (ExecutionException e) {
            throw new KubernetesClientException("deleting secret " + namespace + "/" + name + ": " + e.getCause(),
                    e.getCause());
        } catch (TimeoutException e) {
            throw new KubernetesClientException("deleting secret " + namespace + "/" + name + ": timed out");
        }
        int code = response.code();
        if (code >= 200 && code < 300) {
            return;
        }
        Status status = null;
        try {
            status = io.qkcm.runtime.Json.api().unmarshal(response.body(), Status.class);
        } catch (RuntimeException ignored) {
            // not a Status
        }
        String message = status != null && status.getMessage() != null ? status.getMessage() : "HTTP " + code;
        throw new KubernetesClientException(message, code, status);
    }
}
