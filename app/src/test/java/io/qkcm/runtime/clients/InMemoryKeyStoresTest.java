package io.qkcm.runtime.clients;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.KeyStore;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The in-memory PKCS#12 stores fabric8 and Vert.x build: one key-derivation iteration, the key intact. */
class InMemoryKeyStoresTest {

    @Test
    void inMemoryKeyStoresKeepTheirKeysWithOneIteration() throws Exception {
        SharedTransports.cheapInMemoryKeyStores();
        assertThat(System.getProperty(SharedTransports.KEY_PBE_ITERATIONS)).isNotNull();
        // a secret key: protected with the same PBE key derivation as a private key, no certificate needed
        javax.crypto.SecretKey key = new javax.crypto.spec.SecretKeySpec(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                12, 13, 14, 15, 16 }, "AES");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null);
        ks.setEntry("k", new KeyStore.SecretKeyEntry(key), new KeyStore.PasswordProtection("changeit".toCharArray()));
        assertThat(ks.getKey("k", "changeit".toCharArray()).getEncoded()).isEqualTo(key.getEncoded());
        assertThat(List.of(ks.aliases().nextElement())).containsExactly("k");
    }
}
