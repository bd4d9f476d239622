package io.qkcm.devui.runtime;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import io.smallrye.common.annotation.Blocking;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The JSON-RPC methods of qkcm's Dev UI card (registered as a bean by the deployment module's build step,
 * in dev mode only). Blocking: the state reads the leader Lease from the API server.
 */
public class QkcmJsonRpcService {

    @Inject
    Instance<QkcmDevUiState> source;

    /** The whole state (see {@link QkcmDevUiState}); {@code error} when the application provides none. */
    @Blocking
    public JsonObject getState() {
        if (!source.isResolvable()) {
            return new JsonObject().put("running", false)
                    .put("error", "no bean of type " + QkcmDevUiState.class.getName() + " in the application");
        }
        try {
            return source.get().devUiState();
        } catch (RuntimeException e) {
            return new JsonObject().put("running", false).put("error", e.toString());
        }
    }

    /** The card's label: how many controllers run, and whether this process leads. */
    @Blocking
    public String getSummary() {
        JsonObject s = getState();
        if (s.containsKey("error")) {
            return "error";
        }
        if (!s.getBoolean("running", false)) {
            return "not running";
        }
        JsonArray controllers = s.getJsonArray("controllers", new JsonArray());
        long running = controllers.stream().filter(c -> "running".equals(((JsonObject) c).getString("state")))
                .count();
        JsonObject le = s.getJsonObject("leaderElection", new JsonObject());
        String leader = !le.getBoolean("enabled", false) ? "no election"
                : le.getBoolean("leading", false) ? "leader" : "standby";
        return running + "/" + controllers.size() + " running, " + leader;
    }
}
