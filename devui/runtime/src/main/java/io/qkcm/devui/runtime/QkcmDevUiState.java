package io.qkcm.devui.runtime;

import io.vertx.core.json.JsonObject;

/**
 * The contract between qkcm and its Dev UI card: the application provides one CDI bean of this type (qkcm's
 * {@code io.qkcm.manager.DevConsole}); the card's JSON-RPC service asks it for the state to show. The
 * extension never depends on the application.
 *
 * <p>The state is the JSON of qkcm's {@code /q/qkcm/state}: {@code running}; {@code controllers} (each with
 * {@code name}, {@code state}, {@code healthy}, optional {@code partial} and {@code workers}, and {@code queues}
 * with {@code name}, {@code depth}, {@code adds}, {@code retries}, ...); {@code notImplemented}; {@code skipped};
 * {@code leaderElection} ({@code enabled}, {@code leading}, {@code identity}, {@code holder}, ...);
 * {@code informers} ({@code type}, {@code synced}, {@code items}, ...) and {@code informersSynced}.
 */
public interface QkcmDevUiState {

    /** A fresh snapshot; may block briefly (the leader Lease is read from the API server). */
    JsonObject devUiState();
}
