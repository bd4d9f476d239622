package io.qkcm.controller.nodeipam;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * Upstream's cidr_set_test.go tables (pkg/controller/nodeipam/ipam/cidrset, v1.34): block indexing,
 * allocation order (the first free block at or after the one following the last allocation, wrapping),
 * occupy/release ranges and the IPv6 size limit. Pure data structure: no API server involved.
 */
class CidrSetTest {

    private final CidrSetMetrics metrics = new CidrSetMetrics(new SimpleMeterRegistry());

    private CidrSet set(String clusterCIDR, int nodeMask) {
        return CidrSet.create(IPNet.parseSloppy(clusterCIDR), nodeMask, metrics);
    }

    /** TestCIDRSetFullyAllocated. */
    @ParameterizedTest
    @CsvSource({ "127.123.234.0/30, 30, 127.123.234.0/30", "beef:1234::/30, 30, beef:1234::/30" })
    void fullyAllocated(String cluster, int mask, String expected) {
        CidrSet a = set(cluster, mask);
        IPNet p = a.allocateNext();
        assertThat(p).hasToString(expected);
        assertThatThrownBy(a::allocateNext).hasMessage(CidrSet.ERR_NO_CIDRS_REMAINING);
        a.release(p);
        assertThat(a.allocateNext()).hasToString(expected);
        assertThatThrownBy(a::allocateNext).isInstanceOf(CidrSet.NoCIDRsRemaining.class);
    }

    /** TestIndexToCIDRBlock. */
    @ParameterizedTest
    @CsvSource({
            "127.123.3.0/16, 24, 0, 127.123.0.0/24",
            "127.123.0.0/16, 24, 15, 127.123.15.0/24",
            "192.168.5.219/28, 32, 5, 192.168.5.213/32",
            "2001:0db8:1234:3::/48, 64, 0, 2001:db8:1234::/64",
            "2001:0db8:1234::/48, 64, 15, 2001:db8:1234:f::/64",
            "2001:0db8:85a3::8a2e:0370:7334/50, 63, 6425, 2001:db8:85a3:3232::/63",
            "2001:0db8::/32, 48, 0, 2001:db8::/48",
            "2001:0db8::/32, 48, 15, 2001:db8:f::/48",
            "2001:0db8:85a3::8a2e:0370:7334/32, 48, 6425, 2001:db8:1919::/48",
            "2001:0db8:1234:ff00::/56, 72, 0, 2001:db8:1234:ff00::/72",
            "2001:0db8:1234:ff00::/56, 72, 15, 2001:db8:1234:ff00:f00::/72",
            "2001:0db8:1234:ff00::0370:7334/56, 72, 6425, 2001:db8:1234:ff19:1900::/72",
            "2001:0db8:1234:0:1234::/80, 96, 0, 2001:db8:1234:0:1234::/96",
            "2001:0db8:1234:0:1234::/80, 96, 15, 2001:db8:1234:0:1234:f::/96",
            "2001:0db8:1234:ff00::0370:7334/80, 96, 6425, 2001:db8:1234:ff00:0:1919::/96" })
    void indexToCIDRBlock(String cluster, int mask, int index, String block) {
        assertThat(set(cluster, mask).indexToCIDRBlock(index)).hasToString(block);
    }

    /**
     * TestCIDRSet_RandomishAllocation and TestCIDRSet_AllocationOccupied: 256 blocks handed out in index
     * order; after releasing them all, the same 256 again; with the upper half occupied, the lower half.
     */
    @ParameterizedTest
    @CsvSource({ "127.123.234.0/16, 127.123.", "beef:1234::/16, beef:" })
    void allocationOrderWrapsAndSkipsOccupied(String cluster, String prefix) {
        CidrSet a = set(cluster, 24);
        List<IPNet> first = new ArrayList<>();
        for (int i = 0; i < 256; i++) {
            first.add(a.allocateNext());
        }
        assertThat(first.get(0).toString()).startsWith(prefix);
        assertThat(first.get(1)).isEqualTo(a.indexToCIDRBlock(1));
        assertThatThrownBy(a::allocateNext).isInstanceOf(CidrSet.NoCIDRsRemaining.class);
        first.forEach(a::release);
        List<IPNet> again = new ArrayList<>();
        for (int i = 0; i < 256; i++) {
            again.add(a.allocateNext());
        }
        assertThat(again).containsExactlyElementsOf(first);

        first.forEach(a::release);
        for (int i = 128; i < 256; i++) {
            a.occupy(first.get(i));
        }
        a.occupy(first.get(128));
        List<IPNet> lower = new ArrayList<>();
        for (int i = 0; i < 128; i++) {
            lower.add(a.allocateNext());
        }
        assertThatThrownBy(a::allocateNext).isInstanceOf(CidrSet.NoCIDRsRemaining.class);
        assertThat(lower).containsExactlyElementsOf(first.subList(0, 128));
    }

    /** Not the lowest free block: the next one after the last allocation (range_allocator_test's "recycle"). */
    @Test
    void nextCandidateRovesPastReleasedBlocks() {
        CidrSet a = set("127.123.234.0/28", 30);
        a.occupy(IPNet.parseSloppy("127.123.234.4/30"));
        a.occupy(IPNet.parseSloppy("127.123.234.8/30"));
        assertThat(a.allocateNext()).hasToString("127.123.234.0/30");
        a.release(IPNet.parseSloppy("127.123.234.0/30"));
        // candidate 1 and 2 are taken, 3 is free: the released 0 comes only after a wrap
        assertThat(a.allocateNext()).hasToString("127.123.234.12/30");
        assertThat(a.allocateNext()).hasToString("127.123.234.0/30");
    }

    /** TestDoubleOccupyRelease. */
    @Test
    void doubleOccupyRelease() {
        CidrSet a = set("10.42.0.0/16", 24);
        Object[][] ops = { { "10.42.5.0/24", true, 1 }, { "10.42.9.0/24", true, 2 }, { "10.42.8.0/22", true, 5 },
                { "10.42.9.0/24", true, 5 }, { "10.42.9.0/24", false, 4 }, { "10.42.9.0/24", false, 4 },
                { "10.42.4.0/22", false, 3 } };
        for (Object[] op : ops) {
            IPNet cidr = IPNet.parseSloppy((String) op[0]);
            if ((Boolean) op[1]) {
                a.occupy(cidr);
            } else {
                a.release(cidr);
            }
            assertThat(a.allocatedCIDRs()).as("%s", op[0]).isEqualTo(((Integer) op[2]).longValue());
        }
        for (int i = 0; i < 256 - 3; i++) {
            a.allocateNext();
        }
        assertThatThrownBy(a::allocateNext).isInstanceOf(CidrSet.NoCIDRsRemaining.class);
    }

    /** TestGetBitforCIDR. */
    @ParameterizedTest
    @CsvSource({
            "127.0.0.0/8, 16, 127.0.0.0/16, 0", "be00::/8, 16, be00::/16, 0",
            "127.0.0.0/8, 16, 127.123.0.0/16, 123", "be00::/8, 16, beef::/16, 239",
            "127.0.0.0/8, 16, 127.168.0.0/16, 168", "be00::/8, 16, be68::/16, 104",
            "127.0.0.0/8, 16, 127.224.0.0/16, 224", "be00::/8, 16, be24::/16, 36",
            "192.168.0.0/16, 24, 192.168.12.0/24, 12", "beef::/16, 24, beef:1200::/24, 18",
            "192.168.0.0/16, 24, 192.168.151.0/24, 151", "beef::/16, 24, beef:9700::/24, 151",
            "192.168.0.0/16, 24, 127.168.224.0/24, -1", "beef::/16, 24, 2001:db00::/24, -1" })
    void indexForIP(String cluster, int mask, String subnet, long expected) {
        CidrSet a = set(cluster, mask);
        byte[] ip = IPNet.parseSloppy(subnet).ip();
        if (expected < 0) {
            assertThatThrownBy(() -> a.indexForIP(ip)).hasMessageContaining("is out of the range of CIDR allocator");
        } else {
            assertThat(a.indexForIP(ip)).isEqualTo(expected);
        }
    }

    /** TestOccupy: which blocks an occupied CIDR covers. */
    @ParameterizedTest
    @CsvSource({
            "127.0.0.0/8, 16, 127.0.0.0/8, 0, 255", "2001:beef:1200::/40, 48, 2001:beef:1200::/40, 0, 255",
            "127.0.0.0/8, 16, 127.0.0.0/2, 0, 255", "2001:beef:1200::/40, 48, 2001:beef:1234::/34, 0, 255",
            "127.0.0.0/8, 16, 127.0.0.0/16, 0, 0", "2001:beef:1200::/40, 48, 2001:beef:1200::/48, 0, 0",
            "127.0.0.0/8, 32, 127.0.0.0/16, 0, 65535", "2001:beef:1200::/48, 64, 2001:beef:1200::/48, 0, 65535",
            "127.0.0.0/7, 16, 127.0.0.0/15, 256, 257", "2001:beef:7f00::/39, 48, 2001:beef:7f00::/47, 256, 257",
            "127.0.0.0/7, 15, 127.0.0.0/15, 128, 128", "2001:beef:7f00::/39, 47, 2001:beef:7f00::/47, 128, 128",
            "127.0.0.0/7, 18, 127.0.0.0/15, 1024, 1031", "2001:beef:7f00::/39, 50, 2001:beef:7f00::/47, 1024, 1031" })
    void occupy(String cluster, int mask, String subnet, long begin, long end) {
        CidrSet a = set(cluster, mask);
        a.occupy(IPNet.parseSloppy(subnet));
        assertThat(a.allocatedCIDRs()).isEqualTo(end - begin + 1);
        assertThat(a.isUsed(begin)).isTrue();
        assertThat(a.isUsed(end)).isTrue();
        if (begin > 0) {
            assertThat(a.isUsed(begin - 1)).isFalse();
        }
        assertThat(a.isUsed(end + 1)).isFalse();
    }

    /** TestCIDRSetv6. */
    @Test
    void ipv6SizesAndFirstAllocations() {
        CidrSet v4 = set("127.0.0.0/8", 32);
        assertThat(v4.allocateNext()).hasToString("127.0.0.0/32");
        assertThat(v4.allocateNext()).hasToString("127.0.0.1/32");
        assertThatThrownBy(() -> set("beef:1234::/32", 49)).hasMessage(CidrSet.ERR_SUBNET_TOO_BIG);
        CidrSet v6 = set("2001:beef:1234:369b::/60", 64);
        assertThat(v6.allocateNext()).hasToString("2001:beef:1234:3690::/64");
        assertThat(v6.allocateNext()).hasToString("2001:beef:1234:3691::/64");
    }

    /** TestCidrSetMetrics, in part: allocations, releases and occupations are counted per cluster CIDR. */
    @Test
    void metricsCountAllocationsAndReleases() {
        CidrSet a = set("10.0.0.0/16", 24);
        for (int i = 0; i < 3; i++) {
            a.allocateNext();
        }
        a.release(IPNet.parseSloppy("10.0.1.0/24"));
        assertThat(metrics.allocations("10.0.0.0/16")).isEqualTo(3);
        assertThat(metrics.releases("10.0.0.0/16")).isEqualTo(1);
    }

    @Test
    void outOfRangeCIDRIsRefused() {
        CidrSet a = set("10.10.0.0/16", 24);
        assertThatThrownBy(() -> a.occupy(IPNet.parseSloppy("172.10.0.1/24")))
                .hasMessage("cidr 172.10.0.0/24 is out the range of cluster cidr 10.10.0.0/16");
        assertThatThrownBy(() -> a.occupy(IPNet.parseSloppy("a00::/86"))).hasMessageContaining("is out the range");
    }
}
