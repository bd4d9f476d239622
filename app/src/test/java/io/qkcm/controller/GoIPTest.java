package io.qkcm.controller;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** ParseIPSloppy + Go's IP.String, as the mirrored addresses are re-stringified upstream. */
class GoIPTest {

    private static String roundTrip(String s) {
        byte[] ip = GoIP.parseSloppy(s);
        return ip == null ? null : GoIP.format(ip);
    }

    @Test
    void ipv4IncludingLeadingZerosAndMappedForms() {
        assertThat(roundTrip("10.0.0.1")).isEqualTo("10.0.0.1");
        assertThat(roundTrip("010.001.000.007")).isEqualTo("10.1.0.7");
        assertThat(roundTrip("::ffff:10.0.0.9")).isEqualTo("10.0.0.9");
        assertThat(roundTrip("::FFFF:a00:9")).isEqualTo("10.0.0.9");
        assertThat(GoIP.isIPv4(GoIP.parseSloppy("::ffff:10.0.0.9"))).isTrue();
        assertThat(GoIP.isIPv4(GoIP.parseSloppy("::10.0.0.9"))).isFalse();
    }

    @Test
    void ipv6CanonicalForm() {
        assertThat(roundTrip("fd00:0:0:0:0:0:0:1")).isEqualTo("fd00::1");
        assertThat(roundTrip("FD00::0:1")).isEqualTo("fd00::1");
        assertThat(roundTrip("2001:db8:0:0:1:0:0:1")).isEqualTo("2001:db8::1:0:0:1");
        assertThat(roundTrip("2001:db8:0:1:1:1:1:1")).isEqualTo("2001:db8:0:1:1:1:1:1");
        assertThat(roundTrip("::")).isEqualTo("::");
        assertThat(roundTrip("::1")).isEqualTo("::1");
        assertThat(roundTrip("1::")).isEqualTo("1::");
        assertThat(roundTrip("::10.0.0.9")).isEqualTo("::a00:9");
    }

    @Test
    void invalidAddresses() {
        for (String s : new String[] { "", "foo", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4 ", "1..2.3",
                "fd00:::1", "1:2:3:4:5:6:7:8:9", "fd00::1::2", "12345::", "1:2:3:4:5:6:7::8", "g::1",
                "example.com", "1.2.3.-4", "１.2.3.4" }) {
            assertThat(GoIP.parseSloppy(s)).as(s).isNull();
        }
    }
}
