package io.qkcm.devui.deployment;

import io.qkcm.devui.runtime.QkcmJsonRpcService;
import io.quarkus.deployment.IsDevelopment;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.devui.spi.JsonRPCProvidersBuildItem;
import io.quarkus.devui.spi.page.CardPageBuildItem;
import io.quarkus.devui.spi.page.Page;

/** qkcm's Dev UI card and its JSON-RPC service: dev mode only, nothing at all in production builds. */
class QkcmDevUiProcessor {

    @BuildStep(onlyIf = IsDevelopment.class)
    CardPageBuildItem card() {
        CardPageBuildItem card = new CardPageBuildItem();
        card.addPage(Page.webComponentPageBuilder()
                .title("Controllers")
                .icon("font-awesome-solid:gears")
                .componentLink("qwc-qkcm-controllers.js")
                .dynamicLabelJsonRPCMethodName("getSummary"));
        card.addPage(Page.externalPageBuilder("State (JSON)")
                .icon("font-awesome-solid:code")
                .url("/q/qkcm/state")
                .isJsonContent());
        card.addPage(Page.externalPageBuilder("Dev console")
                .icon("font-awesome-solid:table")
                .url("/q/qkcm")
                .doNotEmbed());
        return card;
    }

    @BuildStep(onlyIf = IsDevelopment.class)
    JsonRPCProvidersBuildItem jsonRpc() {
        return new JsonRPCProvidersBuildItem(QkcmJsonRpcService.class);
    }
}
