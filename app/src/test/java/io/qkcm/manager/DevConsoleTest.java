package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** The dev console (dev mode and tests only): its page and the state it shows, against a real API server. */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class DevConsoleTest {

    @TestHTTPResource("/q/qkcm")
    URI page;
    @TestHTTPResource("/q/qkcm/state")
    URI state;

    private static HttpResponse<String> get(URI uri) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesThePage() throws Exception {
        HttpResponse<String> response = get(page);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/html"));
        assertThat(response.body()).contains("qkcm — dev console", "/state");
    }

    @Test
    void showsControllersQueuesLeaderAndInformers() throws Exception {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonObject s = new JsonObject(get(state).body());
            assertThat(s.getBoolean("running")).isTrue();
            assertThat(s.getBoolean("informersSynced")).isTrue();
            // leader election is off in tests: this replica runs the controllers
            assertThat(s.getJsonObject("leaderElection").getBoolean("enabled")).isFalse();
            JsonObject rs = controller(s.getJsonArray("controllers"), "replicaset-controller");
            assertThat(rs.getString("state")).isEqualTo("running");
            assertThat(rs.getInteger("workers")).isEqualTo(5);
            JsonObject queue = rs.getJsonArray("queues").getJsonObject(0);
            assertThat(queue.getString("name")).isEqualTo("replicaset");
            assertThat(queue.fieldNames()).contains("depth", "adds", "retries", "unfinishedWorkSeconds");
            // the garbage collector's own queues are claimed by it, not left over
            assertThat(controller(s.getJsonArray("controllers"), "garbage-collector-controller")
                    .getJsonArray("queues").stream().map(q -> ((JsonObject) q).getString("name")))
                    .contains("garbage_collector_attempt_to_delete", "garbage_collector_attempt_to_orphan");
            assertThat(s.getJsonArray("otherQueues")).isEmpty();
            assertThat(s.getJsonArray("informers").stream().map(i -> ((JsonObject) i).getString("type")))
                    .contains("apps/v1 ReplicaSet", "v1 Pod");
            assertThat(s.getJsonArray("notImplemented").getList()).isEmpty();
        });
    }

    private static JsonObject controller(JsonArray controllers, String name) {
        return controllers.stream().map(JsonObject.class::cast).filter(c -> name.equals(c.getString("name")))
                .findFirst().orElseThrow(() -> new AssertionError("no " + name + " in " + controllers));
    }
}
