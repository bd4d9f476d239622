package io.qkcm.controller.nodeipam;

import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.options.ControllerManagerOptions;

/**
 * node-ipam-controller's descriptor and start function (upstream's {@code newNodeIpamControllerDescriptor}
 * and {@code startNodeIpamController} in cmd/kube-controller-manager/app/core.go, with the checks of
 * {@code NewNodeIpamController} and {@code ipam.New}): off unless {@code --allocate-node-cidrs}; otherwise
 * the flags are checked in upstream's order and a bad value stops the start with upstream's error.
 *
 * <p>Upstream's kube-controller-manager has no cloud provider since v1.31 (KEP-2395) and no legacy IPAM:
 * {@code CloudAllocator}, {@code IPAMFromCluster} and {@code IPAMFromCloud} are refused there with the
 * errors refused here, so RangeAllocator is all there is to port.
 */
public final class NodeIpamControllerDescriptor {

    private static final Logger LOG = Logger.getLogger(NodeIpamControllerDescriptor.class);

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(NodeIpamController.NAME)
            .withAliases("nodeipam")
            .withClientName("node-controller")
            .startedBy(NodeIpamControllerDescriptor::start);

    static final String RANGE_ALLOCATOR = "RangeAllocator";
    static final String CLOUD_ALLOCATOR = "CloudAllocator";
    static final String IPAM_FROM_CLUSTER = "IPAMFromCluster";
    static final String IPAM_FROM_CLOUD = "IPAMFromCloud";

    /** Upstream's defaultNodeMaskCIDRIPv4 and defaultNodeMaskCIDRIPv6. */
    static final int DEFAULT_NODE_MASK_IPV4 = 24;
    static final int DEFAULT_NODE_MASK_IPV6 = 64;

    private NodeIpamControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        RangeAllocator.Params params = params(context.options());
        if (params == null) {
            return null;
        }
        return context.operate(new NodeIpamController(context, params));
    }

    /**
     * The allocator's parameters from the flags, or null when {@code --allocate-node-cidrs} is false.
     * Throws {@link IllegalArgumentException} with upstream's message for a configuration upstream refuses.
     */
    static RangeAllocator.Params params(ControllerManagerOptions options) {
        if (!options.bool("allocate-node-cidrs")) {
            return null;
        }
        String allocatorType = options.raw("cidr-allocator-type");
        if (allocatorType.equals(CLOUD_ALLOCATOR)) {
            throw new IllegalArgumentException(
                    "--cidr-allocator-type is set to 'CloudAllocator' but cloud provider is not configured");
        }
        List<IPNet> clusterCIDRs = validateCIDRs(options.raw("cluster-cidr"));

        // upstream's ApplyTo splits --service-cluster-ip-range at commas: primary, then secondary
        String[] serviceRanges = options.raw("service-cluster-ip-range").split(",", -1);
        IPNet serviceCIDR = serviceCIDR(serviceRanges[0]);
        IPNet secondaryServiceCIDR = serviceRanges.length > 1 ? serviceCIDR(serviceRanges[1]) : null;
        if (serviceCIDR != null && secondaryServiceCIDR != null
                && serviceCIDR.isIPv6() == secondaryServiceCIDR.isIPv6()) {
            throw new IllegalArgumentException(
                    "serviceCIDR and secondaryServiceCIDR are not dualstack (from different IPfamiles)");
        }

        List<Integer> maskSizes = nodeCIDRMaskSizes(options.integer("node-cidr-mask-size"),
                options.integer("node-cidr-mask-size-ipv4"), options.integer("node-cidr-mask-size-ipv6"), clusterCIDRs);

        // NewNodeIpamController
        for (int i = 0; i < clusterCIDRs.size(); i++) {
            if (clusterCIDRs.get(i).prefix() > maskSizes.get(i)) {
                throw new IllegalArgumentException("Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be"
                        + " less than or equal to --node-cidr-mask-size configured for CIDR family");
            }
        }
        if (allocatorType.equals(IPAM_FROM_CLUSTER) || allocatorType.equals(IPAM_FROM_CLOUD)) {
            throw new IllegalArgumentException(
                    "Error trying to Init(): legacy cloud provider support disabled at build time");
        }
        if (!allocatorType.equals(RANGE_ALLOCATOR)) {
            throw new IllegalArgumentException("invalid CIDR allocator type: " + allocatorType);
        }
        return new RangeAllocator.Params(clusterCIDRs, serviceCIDR, secondaryServiceCIDR, maskSizes);
    }

    /** A service range as upstream reads it: blank is none, unparsable is a warning and none. */
    private static IPNet serviceCIDR(String value) {
        if (value.isBlank()) {
            return null;
        }
        try {
            return IPNet.parseSloppy(value);
        } catch (IllegalArgumentException e) {
            LOG.infof("Warning: unsuccessful parsing of service CIDR: CIDR %s err %s", value, e.getMessage());
            return null;
        }
    }

    /** Upstream's validateCIDRs (and processCIDRs): one CIDR, or two of different families. */
    static List<IPNet> validateCIDRs(String cidrsList) {
        String[] split = cidrsList.strip().split(",", -1);
        List<IPNet> cidrs = new ArrayList<>();
        for (int i = 0; i < split.length; i++) {
            try {
                cidrs.add(IPNet.parseSloppy(split[i]));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("invalid CIDR[" + i + "]: <nil> (" + e.getMessage() + ")");
            }
        }
        boolean v4 = cidrs.stream().anyMatch(c -> !c.isIPv6());
        boolean v6 = cidrs.stream().anyMatch(IPNet::isIPv6);
        if (cidrs.size() > 1 && !(v4 && v6)) {
            throw new IllegalArgumentException("len of ClusterCIDRs==" + cidrs.size()
                    + " and they are not configured as dual stack (at least one from each IPFamily");
        }
        if (cidrs.size() > 2) {
            throw new IllegalArgumentException("length of clusterCIDRs is:" + cidrs.size() + " more than max allowed of 2");
        }
        return cidrs;
    }

    /**
     * Upstream's setNodeCIDRMaskSizes: the mask size of each cluster CIDR, by family. Dual-stack takes
     * only the per-family flags; single-stack takes --node-cidr-mask-size or its family's flag, not both.
     */
    static List<Integer> nodeCIDRMaskSizes(int maskSize, int maskSizeIPv4, int maskSizeIPv6, List<IPNet> clusterCIDRs) {
        int ipv4Mask = DEFAULT_NODE_MASK_IPV4;
        int ipv6Mask = DEFAULT_NODE_MASK_IPV6;
        if (clusterCIDRs.size() > 1) {
            if (maskSize != 0) {
                throw new IllegalArgumentException("usage of --node-cidr-mask-size is not allowed with dual-stack clusters");
            }
            if (maskSizeIPv4 != 0) {
                ipv4Mask = maskSizeIPv4;
            }
            if (maskSizeIPv6 != 0) {
                ipv6Mask = maskSizeIPv6;
            }
            return sortedSizes(ipv4Mask, ipv6Mask, clusterCIDRs);
        }
        boolean singleStackIPv6 = clusterCIDRs.get(0).isIPv6();
        if (maskSize != 0) {
            if (maskSizeIPv4 != 0 || maskSizeIPv6 != 0) {
                throw new IllegalArgumentException("usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is"
                        + " not allowed if --node-cidr-mask-size is set. For dual-stack clusters please unset it and use"
                        + " IPFamily specific flags");
            }
            return sortedSizes(maskSize, maskSize, clusterCIDRs);
        }
        if (maskSizeIPv4 != 0) {
            if (singleStackIPv6) {
                throw new IllegalArgumentException(
                        "usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster");
            }
            ipv4Mask = maskSizeIPv4;
        }
        if (maskSizeIPv6 != 0) {
            if (!singleStackIPv6) {
                throw new IllegalArgumentException(
                        "usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster");
            }
            ipv6Mask = maskSizeIPv6;
        }
        return sortedSizes(ipv4Mask, ipv6Mask, clusterCIDRs);
    }

    private static List<Integer> sortedSizes(int ipv4Mask, int ipv6Mask, List<IPNet> clusterCIDRs) {
        return clusterCIDRs.stream().map(c -> c.isIPv6() ? ipv6Mask : ipv4Mask).toList();
    }
}
