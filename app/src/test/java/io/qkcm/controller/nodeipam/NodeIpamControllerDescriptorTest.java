package io.qkcm.controller.nodeipam;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;

/**
 * startNodeIpamController's checks (cmd/kube-controller-manager/app/core.go validateCIDRs and
 * setNodeCIDRMaskSizes, NewNodeIpamController, ipam.New) in upstream's order, with upstream's errors,
 * and the options check of --service-cluster-ip-range. No API server: these fail before any request.
 */
class NodeIpamControllerDescriptorTest {

    private static ControllerManagerOptions options(String... flagsAndValues) {
        Map<String, String> config = new HashMap<>();
        for (int i = 0; i < flagsAndValues.length; i += 2) {
            config.put("qkcm." + flagsAndValues[i], flagsAndValues[i + 1]);
        }
        return new ControllerManagerOptions(Flags.upstream(), k -> Optional.ofNullable(config.get(k)));
    }

    @Test
    void offUnlessAllocateNodeCIDRs() {
        // upstream's default: the controller does not run, whatever else is set (even a bad --cluster-cidr)
        assertThat(NodeIpamControllerDescriptor.params(options("cluster-cidr", "not-a-cidr"))).isNull();
        assertThat(NodeIpamControllerDescriptor.params(options("allocate-node-cidrs", "false"))).isNull();
    }

    @Test
    void startsNothingUnlessAllocateNodeCIDRs() {
        // upstream's start function returns "not started" before it touches anything else
        var context = new io.qkcm.runtime.josdk.ControllerContext(NodeIpamController.NAME, null, null, null,
                options("cluster-cidr", "10.244.0.0/16"), null, null);
        assertThat(NodeIpamControllerDescriptor.start(context)).isNull();
    }

    @Test
    void singleStackDefaultsAndServiceRanges() {
        RangeAllocator.Params p = NodeIpamControllerDescriptor.params(options("allocate-node-cidrs", "true",
                "cluster-cidr", "10.244.0.0/16", "service-cluster-ip-range", "10.96.0.0/12,fd00:10:96::/112"));
        assertThat(p.clusterCIDRs()).extracting(IPNet::toString).containsExactly("10.244.0.0/16");
        assertThat(p.nodeCIDRMaskSizes()).containsExactly(24);
        assertThat(p.serviceCIDR()).hasToString("10.96.0.0/12");
        assertThat(p.secondaryServiceCIDR()).hasToString("fd00:10:96::/112");
    }

    @Test
    void dualStackTakesPerFamilyMasksInClusterCIDROrder() {
        RangeAllocator.Params p = NodeIpamControllerDescriptor.params(options("allocate-node-cidrs", "true",
                "cluster-cidr", "fd00:10:244::/56,10.244.0.0/16", "node-cidr-mask-size-ipv4", "26"));
        assertThat(p.nodeCIDRMaskSizes()).containsExactly(64, 26);
        assertThat(p.serviceCIDR()).isNull();
        assertThat(p.secondaryServiceCIDR()).isNull();
    }

    @Test
    void unparsableServiceRangeIsOnlyAWarning() {
        RangeAllocator.Params p = NodeIpamControllerDescriptor.params(options("allocate-node-cidrs", "true",
                "cluster-cidr", "10.244.0.0/16", "service-cluster-ip-range", "bogus"));
        assertThat(p.serviceCIDR()).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "cidr-allocator-type=CloudAllocator;cluster-cidr=10.0.0.0/16|--cidr-allocator-type is set to 'CloudAllocator' but cloud provider is not configured",
            "cluster-cidr=|invalid CIDR[0]: <nil> (invalid CIDR address: )",
            "cluster-cidr=10.0.0.0/16, fd00::/48|invalid CIDR[1]: <nil> (invalid CIDR address:  fd00::/48)",
            "cluster-cidr=10.0.0.0/16,10.1.0.0/16|len of ClusterCIDRs==2 and they are not configured as dual stack (at least one from each IPFamily",
            "cluster-cidr=10.0.0.0/16,fd00::/48,10.1.0.0/16|length of clusterCIDRs is:3 more than max allowed of 2",
            "cluster-cidr=10.0.0.0/16;service-cluster-ip-range=10.96.0.0/12,10.97.0.0/16|serviceCIDR and secondaryServiceCIDR are not dualstack (from different IPfamiles)",
            "cluster-cidr=10.0.0.0/16,fd00::/48;node-cidr-mask-size=24|usage of --node-cidr-mask-size is not allowed with dual-stack clusters",
            "cluster-cidr=10.0.0.0/16;node-cidr-mask-size=24;node-cidr-mask-size-ipv4=24|usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed if --node-cidr-mask-size is set. For dual-stack clusters please unset it and use IPFamily specific flags",
            "cluster-cidr=fd00::/48;node-cidr-mask-size-ipv4=24|usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster",
            "cluster-cidr=10.0.0.0/16;node-cidr-mask-size-ipv6=64|usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster",
            "cluster-cidr=10.0.0.0/16;node-cidr-mask-size=8|Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less than or equal to --node-cidr-mask-size configured for CIDR family",
            "cluster-cidr=10.0.0.0/16;cidr-allocator-type=IPAMFromCluster|Error trying to Init(): legacy cloud provider support disabled at build time",
            "cluster-cidr=10.0.0.0/16;cidr-allocator-type=IPAMFromCloud|Error trying to Init(): legacy cloud provider support disabled at build time",
            "cluster-cidr=10.0.0.0/16;cidr-allocator-type=Other|invalid CIDR allocator type: Other" })
    void refusedWithUpstreamsError(String settings, String error) {
        Map<String, String> config = new HashMap<>();
        config.put("qkcm.allocate-node-cidrs", "true");
        for (String kv : settings.split(";")) {
            int eq = kv.indexOf('=');
            config.put("qkcm." + kv.substring(0, eq), kv.substring(eq + 1));
        }
        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(),
                k -> Optional.ofNullable(config.get(k)));
        assertThatThrownBy(() -> NodeIpamControllerDescriptor.params(options)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage(error);
    }

    @Test
    void moreThanTwoServiceRangesStopTheProcess() {
        assertThat(options("service-cluster-ip-range", "10.96.0.0/12,fd00::/112,10.97.0.0/16").validate())
                .contains("--service-cluster-ip-range can not contain more than two entries");
        assertThat(options("service-cluster-ip-range", "10.96.0.0/12,fd00::/112").validate()).isEmpty();
    }
}
