package io.qkcm.pki;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import javax.security.auth.x500.X500Principal;

import org.bouncycastle.asn1.DERBMPString;
import org.bouncycastle.asn1.DERPrintableString;
import org.bouncycastle.asn1.DERUTF8String;
import org.bouncycastle.asn1.x500.AttributeTypeAndValue;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.junit.jupiter.api.Test;

import io.qkcm.pki.DistinguishedNames.Attribute;

class DistinguishedNamesTest {

    @Test
    void attributesInEncodingOrderWithSpecialCharactersIntact() {
        // RFC 2253 string form is most significant last: the encoding is O=..., O=..., CN=...
        X500Principal p = new X500Principal("CN=alice\\, the admin,O=a\\, b,O=system:masters+OU=x,O=\\\"q\\\"\\+\\=\\\\");
        List<Attribute> attrs = DistinguishedNames.attributes(p);
        assertThat(attrs).containsExactly(
                new Attribute("2.5.4.10", "\"q\"+=\\"),
                new Attribute("2.5.4.11", "x"), // a multi-valued RDN is a DER SET OF: sorted by encoding
                new Attribute("2.5.4.10", "system:masters"),
                new Attribute("2.5.4.10", "a, b"),
                new Attribute("2.5.4.3", "alice, the admin"));
        assertThat(DistinguishedNames.values(attrs, DistinguishedNames.ORGANIZATION))
                .containsExactly("\"q\"+=\\", "system:masters", "a, b");
        assertThat(DistinguishedNames.values(attrs, DistinguishedNames.COMMON_NAME)).containsExactly("alice, the admin");
        assertThat(DistinguishedNames.values(attrs, "2.5.4.6")).isEmpty();
    }

    @Test
    void everyStringTypeAndNonStringValues() throws Exception {
        byte[] name = new X500NameBuilder(BCStyle.INSTANCE)
                .addRDN(BCStyle.C, new DERPrintableString("DE"))
                .addRDN(BCStyle.O, new DERBMPString("Bär, GmbH"))
                .addMultiValuedRDN(new AttributeTypeAndValue[] {
                        new AttributeTypeAndValue(BCStyle.CN, new DERUTF8String("日本")),
                        new AttributeTypeAndValue(BCStyle.O, new org.bouncycastle.asn1.ASN1Integer(5)) })
                .build().getEncoded();
        assertThat(DistinguishedNames.attributes(name)).containsExactly(
                new Attribute("2.5.4.6", "DE"),
                new Attribute("2.5.4.10", "Bär, GmbH"),
                new Attribute("2.5.4.10", "#020105"), // SET OF, sorted: the shorter encoding first
                new Attribute("2.5.4.3", "日本"));
    }

    @Test
    void emptyAndMalformedNames() {
        assertThat(DistinguishedNames.attributes(new X500Principal(""))).isEmpty();
        assertThatThrownBy(() -> DistinguishedNames.attributes(new byte[] { 0x31, 0 }))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DistinguishedNames.attributes(Der.sequence(Der.sequence())))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DistinguishedNames.attributes(Der.sequence(Der.set(Der.sequence(Der.oid("2.5.4.3"))))))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
