package io.qkcm.controller.nodeipam;

import java.math.BigInteger;
import java.util.HashMap;
import java.util.Map;

/**
 * Upstream's cidrset.CidrSet (pkg/controller/nodeipam/ipam/cidrset): the node-sized blocks of one
 * cluster CIDR, as a bitmap of used blocks. {@link #allocateNext} hands out the first free block at or
 * after the one following the last allocation, wrapping around (not the lowest free block), so the
 * order of allocations is upstream's. All methods are safe for concurrent use.
 */
final class CidrSet {

    static final String ERR_NO_CIDRS_REMAINING =
            "CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range";
    static final String ERR_SUBNET_TOO_BIG = "New CIDR set failed; the node CIDR size is too big";

    /** Upstream's clusterSubnetMaxDiff: an IPv6 cluster CIDR is split into at most 2^16 node blocks. */
    private static final int CLUSTER_SUBNET_MAX_DIFF = 16;

    private final IPNet clusterCIDR;
    private final int clusterMaskSize;
    private final int nodeMaskSize;
    private final long maxCIDRs;
    private final CidrSetMetrics.Series metrics;
    private final Bitmap used = new Bitmap();
    private long allocatedCIDRs;
    private long nextCandidate;

    private CidrSet(IPNet clusterCIDR, int nodeMaskSize, CidrSetMetrics.Series metrics) {
        this.clusterCIDR = clusterCIDR;
        this.clusterMaskSize = clusterCIDR.prefix();
        this.nodeMaskSize = nodeMaskSize;
        int diff = nodeMaskSize - clusterMaskSize;
        // Go shifts by an unsigned amount: a node mask shorter than the cluster's leaves nothing to allocate
        this.maxCIDRs = diff < 0 || diff > 62 ? 0 : 1L << diff;
        this.metrics = metrics;
        metrics.max(maxCIDRs);
    }

    /** Upstream's NewCIDRSet; {@code metrics} are the series labelled with this cluster CIDR. */
    static CidrSet create(IPNet clusterCIDR, int nodeMaskSize, CidrSetMetrics metrics) {
        if (clusterCIDR.isIPv6() && nodeMaskSize - clusterCIDR.prefix() > CLUSTER_SUBNET_MAX_DIFF) {
            throw new IllegalArgumentException(ERR_SUBNET_TOO_BIG);
        }
        return new CidrSet(clusterCIDR, nodeMaskSize, metrics.series(clusterCIDR.toString()));
    }

    IPNet clusterCIDR() {
        return clusterCIDR;
    }

    /** Upstream's indexToCIDRBlock: the cluster network with the index in the node bits. */
    IPNet indexToCIDRBlock(long index) {
        int bits = clusterCIDR.bits();
        BigInteger ip = IPNet.toBig(clusterCIDR.ip()).or(BigInteger.valueOf(index).shiftLeft(bits - nodeMaskSize));
        return new IPNet(IPNet.fromBig(ip, clusterCIDR.ip().length), nodeMaskSize);
    }

    /** Upstream's AllocateNext. */
    synchronized IPNet allocateNext() {
        if (allocatedCIDRs == maxCIDRs) {
            throw new NoCIDRsRemaining();
        }
        long candidate = nextCandidate;
        long tries;
        for (tries = 0; tries < maxCIDRs; tries++) {
            if (!used.get(candidate)) {
                break;
            }
            candidate = (candidate + 1) % maxCIDRs;
        }
        nextCandidate = (candidate + 1) % maxCIDRs;
        used.set(candidate, true);
        allocatedCIDRs++;
        metrics.allocated(tries, usage());
        return indexToCIDRBlock(candidate);
    }

    /** Upstream's Release: every block {@code cidr} covers is free again. */
    void release(IPNet cidr) {
        long[] range = beginningAndEndIndices(cidr);
        synchronized (this) {
            for (long i = range[0]; i <= range[1]; i++) {
                if (used.get(i)) {
                    used.set(i, false);
                    allocatedCIDRs--;
                    metrics.released();
                }
            }
            metrics.usage(usage());
        }
    }

    /** Upstream's Occupy: every block {@code cidr} covers is taken. */
    void occupy(IPNet cidr) {
        long[] range = beginningAndEndIndices(cidr);
        synchronized (this) {
            for (long i = range[0]; i <= range[1]; i++) {
                if (!used.get(i)) {
                    used.set(i, true);
                    allocatedCIDRs++;
                    metrics.occupied();
                }
            }
            metrics.usage(usage());
        }
    }

    synchronized long allocatedCIDRs() {
        return allocatedCIDRs;
    }

    /** Whether block {@code index} is taken (tests). */
    synchronized boolean isUsed(long index) {
        return used.get(index);
    }

    private double usage() {
        return maxCIDRs == 0 ? 0 : (double) allocatedCIDRs / maxCIDRs;
    }

    /** Upstream's getBeginningAndEndIndices: the first and last block {@code cidr} overlaps. */
    long[] beginningAndEndIndices(IPNet cidr) {
        if (cidr == null) {
            throw new IllegalArgumentException(
                    "error getting indices for cluster cidr " + clusterCIDR + ", cidr is nil");
        }
        long begin = 0;
        long end = maxCIDRs - 1;
        if (!clusterCIDR.contains(clusterCIDR.maskOf(cidr.ip())) && !cidr.contains(cidr.maskOf(clusterCIDR.ip()))) {
            throw new IllegalArgumentException("cidr " + cidr + " is out the range of cluster cidr " + clusterCIDR);
        }
        if (clusterMaskSize < cidr.prefix()) {
            begin = indexForIP(IPNet.mask(cidr.ip(), nodeMaskSize));
            end = indexForIP(IPNet.mask(cidr.last(), nodeMaskSize));
        }
        return new long[] { begin, end };
    }

    /** Upstream's getIndexForIP: which block of the cluster CIDR the (node-masked) address starts. */
    long indexForIP(byte[] ip) {
        BigInteger index = IPNet.toBig(clusterCIDR.ip()).xor(IPNet.toBig(ip)).shiftRight(ip.length * 8 - nodeMaskSize);
        if (index.compareTo(BigInteger.valueOf(maxCIDRs)) >= 0) {
            throw new IllegalArgumentException(
                    "CIDR: " + IPNet.format(ip) + "/" + nodeMaskSize + " is out of the range of CIDR allocator");
        }
        return index.longValueExact();
    }

    /** Upstream's ErrCIDRRangeNoCIDRsRemaining. */
    static final class NoCIDRsRemaining extends RuntimeException {
        NoCIDRsRemaining() {
            super(ERR_NO_CIDRS_REMAINING, null, false, false);
        }
    }

    /** The used blocks; pages are made on first use, so a /8 of /32 blocks costs what is used. */
    private static final class Bitmap {
        private static final int PAGE_BITS = 1 << 18;
        private final Map<Long, long[]> pages = new HashMap<>();

        boolean get(long i) {
            long[] page = pages.get(i / PAGE_BITS);
            int bit = (int) (i % PAGE_BITS);
            return page != null && (page[bit >>> 6] & (1L << bit)) != 0;
        }

        void set(long i, boolean value) {
            int bit = (int) (i % PAGE_BITS);
            long[] page = pages.get(i / PAGE_BITS);
            if (page == null) {
                if (!value) {
                    return;
                }
                page = new long[PAGE_BITS / 64];
                pages.put(i / PAGE_BITS, page);
            }
            if (value) {
                page[bit >>> 6] |= 1L << bit;
            } else {
                page[bit >>> 6] &= ~(1L << bit);
            }
        }
    }
}
