package io.qkcm.manager.serving;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;

/** {@link SecureServing#userFromCertificate}: x509.CommonNameUserConversion, CN the user, each O a group. */
class ClientCertificateUserTest {

    @Test
    void commonNameIsTheUserAndEveryOrganizationAGroupInOrder() throws Exception {
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE)
                .addRDN(BCStyle.O, "system:masters")
                .addRDN(BCStyle.O, "example, inc.")
                .addRDN(BCStyle.OU, "ignored")
                .addRDN(BCStyle.CN, "kubernetes-admin")
                .addRDN(BCStyle.O, "last+group")
                .build();
        UserInfo user = SecureServing.userFromCertificate(certificate(subject));
        assertThat(user.name()).isEqualTo("kubernetes-admin");
        assertThat(user.uid()).isEmpty();
        assertThat(user.groups()).containsExactly("system:masters", "example, inc.", "last+group");
        assertThat(user.extra()).isEmpty();
    }

    @Test
    void commaInTheCommonName() throws Exception {
        UserInfo user = SecureServing.userFromCertificate(certificate(new X500Name("CN=doe\\, jane")));
        assertThat(user.name()).isEqualTo("doe, jane");
        assertThat(user.groups()).isEmpty();
    }

    @Test
    void severalCommonNamesTheLastIsTheUserAsGoReadsIt() throws Exception {
        UserInfo user = SecureServing.userFromCertificate(certificate(new X500Name("CN=first,O=g,CN=last")));
        assertThat(user.name()).isEqualTo("last");
    }

    @Test
    void noOrEmptyCommonNameIsNoUser() throws Exception {
        assertThat(SecureServing.userFromCertificate(certificate(new X500Name("O=system:masters")))).isNull();
        assertThat(SecureServing.userFromCertificate(certificate(new X500NameBuilder(BCStyle.INSTANCE)
                .addRDN(BCStyle.CN, "").addRDN(BCStyle.O, "g").build()))).isNull();
    }

    private static X509Certificate certificate(X500Name subject) throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
        gen.initialize(256);
        KeyPair keys = gen.generateKeyPair();
        Instant now = Instant.now();
        return new JcaX509CertificateConverter().getCertificate(new JcaX509v3CertificateBuilder(
                new X500Name("CN=test-ca"), BigInteger.TEN, Date.from(now.minus(1, ChronoUnit.HOURS)),
                Date.from(now.plus(1, ChronoUnit.HOURS)), subject, keys.getPublic())
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
    }
}
