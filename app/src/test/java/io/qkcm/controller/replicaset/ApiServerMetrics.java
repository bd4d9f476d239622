package io.qkcm.controller.replicaset;

import io.fabric8.kubernetes.client.KubernetesClient;

/** Reads the API server's own request counters (its /metrics), to count requests at the server. */
final class ApiServerMetrics {

    private ApiServerMetrics() {
    }

    /** Sum of apiserver_request_total for POST pods (not subresources) with this code ("" = any). */
    static double podCreateRequests(KubernetesClient admin, String code) {
        String metrics = admin.raw("/metrics");
        double sum = 0;
        for (String line : metrics.split("\n")) {
            if (!line.startsWith("apiserver_request_total{")) {
                continue;
            }
            if (!line.contains("resource=\"pods\"") || !line.contains("verb=\"POST\"")
                    || !line.contains("subresource=\"\"")) {
                continue;
            }
            if (!code.isEmpty() && !line.contains("code=\"" + code + "\"")) {
                continue;
            }
            sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
        return sum;
    }
}
