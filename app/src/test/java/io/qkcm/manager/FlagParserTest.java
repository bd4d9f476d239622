package io.qkcm.manager;

import io.qkcm.runtime.options.Flags;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

/** pflag's parsing rules for kube-controller-manager's flag set. */
class FlagParserTest {

    private static final FlagParser PARSER = new FlagParser(Flags.upstream());

    private static FlagParser.Result parse(String... args) throws FlagParser.FlagError {
        return PARSER.parse(List.of(args));
    }

    @Test
    void valuesInEveryForm() throws Exception {
        FlagParser.Result r = parse("--kubeconfig=/a", "--master", "https://x", "--leader-elect=false",
                "--allocate-node-cidrs", "-v", "4", "--kube_api_qps=50", "--leader-elect-lease-duration=1m30s");
        assertThat(r.values()).containsEntry("kubeconfig", "/a").containsEntry("master", "https://x")
                .containsEntry("leader-elect", "false").containsEntry("allocate-node-cidrs", "true")
                .containsEntry("v", "4").containsEntry("kube-api-qps", "50")
                .containsEntry("leader-elect-lease-duration", "1m30s");
        assertThat(r.help()).isFalse();
        assertThat(r.version()).isFalse();
    }

    @Test
    void repeatedSliceFlagsAppend() throws Exception {
        assertThat(parse("--controllers=*", "--controllers=-replicaset,bootstrapsigner").values())
                .containsEntry("controllers", "*,-replicaset,bootstrapsigner");
        assertThat(parse("--kube-api-qps=1", "--kube-api-qps=2").values()).containsEntry("kube-api-qps", "2");
    }

    @Test
    void helpAndVersion() throws Exception {
        assertThat(parse("--help").help()).isTrue();
        assertThat(parse("-h").help()).isTrue();
        assertThat(parse("--version").version()).isTrue();
        assertThat(parse("--version=raw").versionValue()).isEqualTo("raw");
        assertThat(parse("--version=false").version()).isFalse();
    }

    @Test
    void qkcmExtensionsAreFlagsToo() throws Exception {
        assertThat(parse("--leader-elect-release-on-cancel=false", "--shutdown-grace-period=30s").values())
                .containsEntry("leader-elect-release-on-cancel", "false")
                .containsEntry("shutdown-grace-period", "30s");
    }

    @Test
    void errorsNameTheArgument() {
        assertThatThrownBy(() -> parse("--nope")).isInstanceOf(FlagParser.FlagError.class)
                .hasMessage("unknown flag: --nope");
        assertThatThrownBy(() -> parse("-q")).hasMessageContaining("'q'");
        assertThatThrownBy(() -> parse("--kube-api-qps=x")).hasMessageContaining("\"x\"")
                .hasMessageContaining("--kube-api-qps");
        assertThatThrownBy(() -> parse("--kube-api-burst=1.5")).hasMessageContaining("--kube-api-burst");
        assertThatThrownBy(() -> parse("--node-monitor-period=5")).hasMessageContaining("--node-monitor-period");
        assertThatThrownBy(() -> parse("--leader-elect=yes")).hasMessageContaining("--leader-elect");
        assertThatThrownBy(() -> parse("--master")).hasMessageContaining("flag needs an argument: --master");
        assertThatThrownBy(() -> parse("run")).hasMessageContaining("does not take any arguments");
        assertThatThrownBy(() -> parse("--", "x")).hasMessageContaining("does not take any arguments");
        assertThatThrownBy(() -> parse("--feature-gates=NotAGate")).hasMessageContaining("--feature-gates");
    }
}
