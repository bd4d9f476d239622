package io.qkcm.controller.nodeipam;

import java.math.BigInteger;
import java.util.Arrays;

import io.qkcm.controller.GoIP;

/**
 * Go's {@code *net.IPNet} as k8s.io/utils/net's ParseCIDRSloppy returns it: the network address (the
 * parsed address masked), 4 bytes for an address written as IPv4 and 16 for one written as IPv6, and
 * the prefix length. An IPv4-mapped IPv6 CIDR stays a 128-bit network here (Go would call it IPv4 and
 * then misindex it; no cluster uses one).
 */
record IPNet(byte[] ip, int prefix) {

    /** ParseCIDRSloppy: IPv4 octets may have leading zeros; the error is Go's ParseError text. */
    static IPNet parseSloppy(String s) {
        int slash = s.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("invalid CIDR address: " + s);
        }
        String addr = s.substring(0, slash);
        String mask = s.substring(slash + 1);
        byte[] parsed = GoIP.parseSloppy(addr);
        byte[] ip = null;
        if (parsed != null) {
            ip = addr.indexOf(':') < 0 ? Arrays.copyOfRange(parsed, 12, 16) : parsed;
        }
        // Go's dtoi: decimal digits only, at least one
        int n = 0;
        boolean ok = !mask.isEmpty() && mask.length() <= 8;
        for (int i = 0; ok && i < mask.length(); i++) {
            char c = mask.charAt(i);
            ok = c >= '0' && c <= '9';
            n = n * 10 + (c - '0');
        }
        if (ip == null || !ok || n > 8 * ip.length) {
            throw new IllegalArgumentException("invalid CIDR address: " + s);
        }
        return new IPNet(mask(ip, n), n);
    }

    /** 32 or 128. */
    int bits() {
        return ip.length * 8;
    }

    boolean isIPv6() {
        return ip.length == 16;
    }

    /** {@code ip} with every bit past {@code prefix} cleared. */
    static byte[] mask(byte[] ip, int prefix) {
        byte[] out = ip.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - 8 * i));
            out[i] &= (byte) (0xff << (8 - keep));
        }
        return out;
    }

    /** Go's {@code ip.Mask(n.Mask)}: null when the families differ. */
    byte[] maskOf(byte[] other) {
        return other.length == ip.length ? mask(other, prefix) : null;
    }

    /** Go's {@code n.Contains(ip)}; a null or other-family address is not contained. */
    boolean contains(byte[] other) {
        return other != null && other.length == ip.length && Arrays.equals(mask(other, prefix), ip);
    }

    /** The address with every host bit set (the last address of the network). */
    byte[] last() {
        byte[] out = ip.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - 8 * i));
            out[i] |= (byte) (0xff >>> keep);
        }
        return out;
    }

    static BigInteger toBig(byte[] ip) {
        return new BigInteger(1, ip);
    }

    static byte[] fromBig(BigInteger v, int length) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[length];
        int copy = Math.min(raw.length, length);
        System.arraycopy(raw, raw.length - copy, out, length - copy, copy);
        return out;
    }

    /** Go's IPNet String: the address as Go writes it, a slash, the prefix length. */
    @Override
    public String toString() {
        return format(ip) + "/" + prefix;
    }

    static String format(byte[] ip) {
        if (ip.length == 4) {
            return (ip[0] & 0xff) + "." + (ip[1] & 0xff) + "." + (ip[2] & 0xff) + "." + (ip[3] & 0xff);
        }
        return GoIP.format(ip);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IPNet other && other.prefix == prefix && Arrays.equals(other.ip, ip);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(ip) * 31 + prefix;
    }
}
