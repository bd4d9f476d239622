package io.qkcm.devui.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.test.QuarkusDevModeTest;
import io.vertx.core.json.JsonObject;

/**
 * The card in a real dev mode (Quarkus' QuarkusDevModeTest): the Dev UI lists qkcm's card with its pages, serves
 * its web component, and the card's JSON-RPC methods answer over the Dev UI's WebSocket with the state the
 * application's {@code QkcmDevUiState} bean gives at each call. qkcm's own bean (DevConsole) against a real
 * cluster is checked by hack/dev-mode-check.sh.
 */
class QkcmDevUiCardTest {

    static final int PORT = freePort();
    static final AtomicInteger IDS = new AtomicInteger();

    @RegisterExtension
    static final QuarkusDevModeTest DEV = new QuarkusDevModeTest()
            .withApplicationRoot(jar -> jar.addClass(FakeState.class)
                    .addAsResource(new StringAsset("quarkus.http.port=" + PORT + "\nquarkus.http.host=127.0.0.1\n"),
                            "application.properties"));

    @Test
    void theDevUiListsTheCardAndServesItsComponent() throws Exception {
        String data = get("/q/dev-ui/devui-data.js");
        assertThat(data).containsPattern(Pattern.compile("\"namespace\"\\s*:\\s*\"qkcm-devui\""))
                .containsPattern(Pattern.compile("\"componentName\"\\s*:\\s*\"qwc-qkcm-controllers\""))
                .containsPattern(Pattern.compile("\"dynamicLabel\"\\s*:\\s*\"getSummary\""))
                .containsPattern(Pattern.compile("\"externalUrl\"\\s*:\\s*\"/q/qkcm/state\""));
        assertThat(get("/q/dev-ui/qkcm-devui/qwc-qkcm-controllers.js"))
                .contains("customElements.define('qwc-qkcm-controllers'", "getState()");
    }

    @Test
    void jsonRpcGivesTheApplicationsLiveState() throws Exception {
        JsonObject first = rpc("qkcm-devui_getState");
        assertThat(first.getBoolean("running")).isTrue();
        JsonObject rs = first.getJsonArray("controllers").getJsonObject(0);
        assertThat(rs.getString("name")).isEqualTo("replicaset-controller");
        assertThat(rs.getJsonArray("queues").getJsonObject(0).getInteger("retries")).isEqualTo(3);
        assertThat(first.getJsonObject("leaderElection").getString("holder")).isEqualTo("me");
        assertThat(first.getJsonArray("informers").getJsonObject(0).getInteger("items")).isEqualTo(7);
        // asked again, not cached at build time
        assertThat(rpc("qkcm-devui_getState").getInteger("call")).isGreaterThan(first.getInteger("call"));
        assertThat(rpc("qkcm-devui_getSummary").getString("value")).isEqualTo("1/2 running, leader");
    }

    private static String get(String path) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PORT + path)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(path).isEqualTo(200);
        return r.body();
    }

    /** Calls a Dev UI JSON-RPC method the way the Dev UI's page does (its WebSocket); a string result is in "value". */
    private static JsonObject rpc(String method) throws Exception {
        int id = IDS.incrementAndGet();
        CompletableFuture<JsonObject> answer = new CompletableFuture<>();
        WebSocket ws = HttpClient.newHttpClient().newWebSocketBuilder()
                .buildAsync(URI.create("ws://127.0.0.1:" + PORT + "/q/dev-ui/json-rpc-ws"), new WebSocket.Listener() {
                    final StringBuilder text = new StringBuilder();

                    @Override
                    public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
                        text.append(data);
                        if (last) {
                            JsonObject message = new JsonObject(text.toString());
                            text.setLength(0);
                            if (Integer.valueOf(id).equals(message.getInteger("id"))) {
                                answer.complete(message);
                            }
                        }
                        socket.request(1);
                        return null;
                    }
                }).get(60, TimeUnit.SECONDS);
        ws.sendText(new JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", method)
                .put("params", new JsonObject()).encode(), true);
        JsonObject message = answer.get(60, TimeUnit.SECONDS);
        ws.abort();
        assertThat(message.containsKey("error")).as("%s", message).isFalse();
        Object result = message.getJsonObject("result").getValue("object");
        return result instanceof JsonObject o ? o : new JsonObject().put("value", result);
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
