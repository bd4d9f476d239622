package io.qkcm.controller.servicecidrs;

import java.util.Arrays;

import io.qkcm.controller.GoIP;

/**
 * Go's {@code netip.Prefix} and {@code netip.Addr}, as far as upstream's pkg/api/servicecidr uses them:
 * an address (4 bytes for IPv4, 16 for IPv6, as written) and a prefix length, neither necessarily
 * masked. An address written with a colon is IPv6, an IPv4-mapped one included, as netip has it.
 */
record Prefix(byte[] addr, int bits) {

    /** netip.ParsePrefix; null where it fails (an empty or invalid CIDR). */
    static Prefix parse(String s) {
        if (s == null) {
            return null;
        }
        int slash = s.indexOf('/');
        if (slash < 0) {
            return null;
        }
        byte[] addr = parseAddr(s.substring(0, slash));
        String len = s.substring(slash + 1);
        if (addr == null || len.isEmpty() || len.length() > 3 || !len.chars().allMatch(Character::isDigit)
                || (len.length() > 1 && len.charAt(0) == '0')) {
            return null;
        }
        int bits = Integer.parseInt(len);
        return bits > addr.length * 8 ? null : new Prefix(addr, bits);
    }

    /** netip.ParseAddr: 4 bytes for a dotted IPv4 address, 16 for an IPv6 one; null when invalid. */
    static byte[] parseAddr(String s) {
        byte[] ip = GoIP.parseSloppy(s);
        if (ip == null) {
            return null;
        }
        return s.indexOf(':') < 0 ? Arrays.copyOfRange(ip, 12, 16) : ip;
    }

    /** The address with the bits past the prefix cleared (netip's Masked().Addr()). */
    byte[] masked() {
        return mask(addr, bits);
    }

    private static byte[] mask(byte[] ip, int bits) {
        byte[] out = ip.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, bits - 8 * i));
            out[i] &= (byte) (0xff << (8 - keep));
        }
        return out;
    }

    /** netip's Contains: same family and the same leading bits. */
    boolean contains(byte[] ip) {
        return ip != null && ip.length == addr.length && Arrays.equals(mask(ip, bits), masked());
    }

    /** netip's Overlaps: same family, and one contains the other's network address. */
    boolean overlaps(Prefix other) {
        return other.addr.length == addr.length && (contains(other.masked()) || other.contains(masked()));
    }

    /**
     * servicecidr.PrefixContainsIP: inside the prefix, and neither its network address nor, for IPv4,
     * its broadcast address (neither is ever handed out to a Service).
     */
    boolean containsServiceIP(byte[] ip) {
        if (ip == null || Arrays.equals(masked(), ip)) {
            return false;
        }
        if (ip.length == 4 && Arrays.equals(broadcast(), ip)) {
            return false;
        }
        return contains(ip);
    }

    private byte[] broadcast() {
        byte[] out = masked();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, bits - 8 * i));
            out[i] |= (byte) (0xff >>> keep);
        }
        return out;
    }

    boolean isIPv6() {
        return addr.length == 16;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Prefix p && p.bits == bits && Arrays.equals(p.addr, addr);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(addr) * 31 + bits;
    }

    @Override
    public String toString() {
        return GoIP.format(addr.length == 4 ? GoIP.parseSloppy((addr[0] & 0xff) + "." + (addr[1] & 0xff) + "."
                + (addr[2] & 0xff) + "." + (addr[3] & 0xff)) : addr) + "/" + bits;
    }
}
