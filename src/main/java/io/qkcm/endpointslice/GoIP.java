package io.qkcm.endpointslice;

/**
 * The bits of Go's net.IP the reconciler needs: k8s.io/utils/net ParseIPSloppy (IPv4 parts may have
 * leading zeros, read as decimal), IsIPv6 and String(), so addresses are re-stringified exactly as
 * upstream does (RFC 5952 for IPv6; IPv4-mapped IPv6 prints as IPv4). Never resolves names.
 */
final class GoIP {

    private GoIP() {
    }

    /** 16 bytes (IPv4 as IPv4-mapped IPv6, as Go), or null when not an IP literal. */
    static byte[] parseSloppy(String s) {
        if (s == null) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '.') {
                return parseIPv4(s);
            }
            if (c == ':') {
                return parseIPv6(s);
            }
        }
        return null;
    }

    private static byte[] parseIPv4(String s) {
        byte[] ip = v4Mapped();
        int[] parts = v4Parts(s);
        if (parts == null) {
            return null;
        }
        for (int i = 0; i < 4; i++) {
            ip[12 + i] = (byte) parts[i];
        }
        return ip;
    }

    private static int[] v4Parts(String s) {
        String[] p = s.split("\\.", -1);
        if (p.length != 4) {
            return null;
        }
        int[] out = new int[4];
        for (int i = 0; i < 4; i++) {
            String part = p[i];
            if (part.isEmpty() || part.length() > 3) {
                return null;
            }
            int n = 0;
            for (char c : part.toCharArray()) {
                if (c < '0' || c > '9') {
                    return null;
                }
                n = n * 10 + (c - '0');
            }
            if (n > 255) {
                return null;
            }
            out[i] = n;
        }
        return out;
    }

    private static byte[] v4Mapped() {
        byte[] ip = new byte[16];
        ip[10] = (byte) 0xff;
        ip[11] = (byte) 0xff;
        return ip;
    }

    private static byte[] parseIPv6(String s) {
        byte[] ip = new byte[16];
        int ellipsis = -1;
        int i = 0;
        if (s.startsWith("::")) {
            ellipsis = 0;
            s = s.substring(2);
            if (s.isEmpty()) {
                return ip;
            }
        }
        int pos = 0;
        while (i < 16) {
            // hex group
            int n = 0;
            int len = 0;
            while (pos + len < s.length() && Character.digit(s.charAt(pos + len), 16) >= 0 && len < 5) {
                n = n * 16 + Character.digit(s.charAt(pos + len), 16);
                len++;
            }
            if (len == 0 || len > 4 || n > 0xffff) {
                return null;
            }
            // embedded IPv4 at the end
            if (pos + len < s.length() && s.charAt(pos + len) == '.') {
                if (ellipsis < 0 && i != 12) {
                    return null;
                }
                if (i + 4 > 16) {
                    return null;
                }
                int[] parts = v4Parts(s.substring(pos));
                if (parts == null) {
                    return null;
                }
                for (int k = 0; k < 4; k++) {
                    ip[i + k] = (byte) parts[k];
                }
                i += 4;
                pos = s.length();
                break;
            }
            ip[i] = (byte) (n >> 8);
            ip[i + 1] = (byte) n;
            i += 2;
            pos += len;
            if (pos == s.length()) {
                break;
            }
            if (s.charAt(pos) != ':' || pos + 1 == s.length()) {
                return null;
            }
            pos++;
            if (s.charAt(pos) == ':') {
                if (ellipsis >= 0) {
                    return null;
                }
                ellipsis = i;
                pos++;
                if (pos == s.length()) {
                    break;
                }
            }
        }
        if (pos != s.length()) {
            return null;
        }
        if (i < 16) {
            if (ellipsis < 0) {
                return null;
            }
            int n = 16 - i;
            for (int j = i - 1; j >= ellipsis; j--) {
                ip[j + n] = ip[j];
            }
            for (int j = ellipsis + n - 1; j >= ellipsis; j--) {
                ip[j] = 0;
            }
        } else if (ellipsis >= 0) {
            return null;
        }
        return ip;
    }

    private static boolean isV4(byte[] ip) {
        for (int i = 0; i < 10; i++) {
            if (ip[i] != 0) {
                return false;
            }
        }
        return ip[10] == (byte) 0xff && ip[11] == (byte) 0xff;
    }

    /** utilnet.IsIPv6: a valid IP that is not IPv4 (nor IPv4-mapped). */
    static boolean isIPv6(byte[] ip) {
        return ip != null && !isV4(ip);
    }

    /** net.IP.String(); "<nil>" for null, as Go. */
    static String format(byte[] ip) {
        if (ip == null) {
            return "<nil>";
        }
        if (isV4(ip)) {
            return (ip[12] & 0xff) + "." + (ip[13] & 0xff) + "." + (ip[14] & 0xff) + "." + (ip[15] & 0xff);
        }
        // longest run of two or more zero groups becomes "::" (first one on ties)
        int e0 = -1;
        int e1 = -1;
        for (int i = 0; i < 16; i += 2) {
            int j = i;
            while (j < 16 && ip[j] == 0 && ip[j + 1] == 0) {
                j += 2;
            }
            if (j > i && j - i > e1 - e0 && j - i >= 4) {
                e0 = i;
                e1 = j;
                i = j;
            }
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 16; i += 2) {
            if (i == e0) {
                b.append("::");
                i = e1;
                if (i >= 16) {
                    break;
                }
            } else if (i > 0) {
                b.append(':');
            }
            b.append(Integer.toHexString(((ip[i] & 0xff) << 8) | (ip[i + 1] & 0xff)));
        }
        return b.toString();
    }
}
