package io.qkcm.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.PodControl;
import io.vertx.core.http.HttpClosedException;

/**
 * A controller's pod control whose answers a test can lose, for the "writes of unknown outcome" tests: while
 * {@link #lose} is set, each create or delete is performed on the real API server, then the cache's
 * {@link StallingProxy} is stalled (the watch that would show the write falls silent) and the caller gets
 * what a lost answer gives ("Connection was closed"); while {@link #loseRequest} is set, a create is not
 * performed at all and fails the same way (an unknown outcome that was in fact a failure). Counts every call.
 */
public final class LosingPodControl implements PodControl {

    public final AtomicBoolean lose = new AtomicBoolean();
    public final AtomicBoolean loseRequest = new AtomicBoolean();
    public final AtomicInteger creates = new AtomicInteger();
    public final AtomicInteger deletes = new AtomicInteger();
    public final AtomicInteger patches = new AtomicInteger();
    private final PodControl real;
    private final StallingProxy cacheProxy;

    public LosingPodControl(PodControl real, StallingProxy cacheProxy) {
        this.real = real;
        this.cacheProxy = cacheProxy;
    }

    /**
     * A copy of the real API server's kubeconfig that points at {@code proxy} instead: the informers of a
     * controller built from it watch through the proxy, while {@code direct} keeps talking to the server.
     */
    public static Path kubeconfigVia(StallingProxy proxy, KubernetesClient direct, String prefix) throws IOException {
        Path kubeconfig = Files.createTempFile(prefix, ".kubeconfig");
        String server = direct.getConfiguration().getMasterUrl().replaceAll("/$", "");
        Files.writeString(kubeconfig, Files.readString(RealApiServer.get().kubeconfig()).replace(server, proxy.url()));
        return kubeconfig;
    }

    private static KubernetesClientException lostAnswer() {
        return new KubernetesClientException("Connection was closed", new HttpClosedException("Connection was closed"));
    }

    @Override
    public Pod createPodsWithGenerateName(String namespace, PodTemplateSpec template, HasMetadata controllerObject,
            OwnerReference controllerRef, String generateName) {
        creates.incrementAndGet();
        if (loseRequest.get()) {
            throw lostAnswer();
        }
        boolean losing = lose.get();
        if (losing) {
            cacheProxy.stall();
        }
        Pod pod = real.createPodsWithGenerateName(namespace, template, controllerObject, controllerRef, generateName);
        if (losing) {
            throw lostAnswer();
        }
        return pod;
    }

    @Override
    public void deletePod(String namespace, String podName, HasMetadata controllerObject) {
        deletes.incrementAndGet();
        boolean losing = lose.get();
        if (losing) {
            cacheProxy.stall();
        }
        real.deletePod(namespace, podName, controllerObject);
        if (losing) {
            throw lostAnswer();
        }
    }

    @Override
    public void patchPod(String namespace, String name, String strategicMergePatch) {
        patches.incrementAndGet();
        real.patchPod(namespace, name, strategicMergePatch);
    }
}
