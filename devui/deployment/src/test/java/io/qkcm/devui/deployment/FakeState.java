package io.qkcm.devui.deployment;

import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;

import io.qkcm.devui.runtime.QkcmDevUiState;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** The application side of the contract in {@link QkcmDevUiCardTest}: a state in qkcm's shape, new at each call. */
@ApplicationScoped
public class FakeState implements QkcmDevUiState {

    private final AtomicInteger calls = new AtomicInteger();

    @Override
    public JsonObject devUiState() {
        int n = calls.incrementAndGet();
        JsonObject queue = new JsonObject().put("name", "replicaset").put("depth", 2).put("adds", 10 * n).put("retries", 3);
        return new JsonObject().put("running", true).put("call", n)
                .put("leaderElection", new JsonObject().put("enabled", true).put("leading", true)
                        .put("lease", "kube-system/kube-controller-manager").put("identity", "me").put("holder", "me"))
                .put("controllers", new JsonArray()
                        .add(new JsonObject().put("name", "replicaset-controller").put("state", "running")
                                .put("healthy", true).put("workers", 5).put("queues", new JsonArray().add(queue)))
                        .add(new JsonObject().put("name", "node-lifecycle-controller").put("state", "starting")
                                .put("healthy", true).put("partial", "no taint manager").put("queues", new JsonArray())))
                .put("notImplemented", new JsonArray().add("disruption-controller"))
                .put("skipped", new JsonArray())
                .put("informers", new JsonArray().add(new JsonObject().put("type", "apps/v1 ReplicaSet")
                        .put("synced", true).put("watching", true).put("items", 7).put("resourceVersion", "42")))
                .put("informersSynced", true);
    }
}
