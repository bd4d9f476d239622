package io.qkcm.controller.certificates.signer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jboss.logging.Logger;

import io.qkcm.pki.PrivateKeys;

/**
 * Upstream's caProvider (signer/ca_provider.go) over apiserver's DynamicCertKeyPairContent: the signing
 * certificate and key files, loaded at start (an error there fails the controller's start, as upstream)
 * and read again before each signature, so a change of either file is used by the next one. A pair that
 * no longer loads (a missing or unreadable file, a key that does not match the certificate) keeps the last
 * good pair, as upstream's loader, and is logged once per distinct error; a pair that loads but does not
 * make a CA (not exactly one certificate) fails the signatures until it is fixed, as upstream's setCA.
 * Nothing read from the files is ever logged or put in an error message.
 */
final class CAProvider {

    private static final Logger LOG = Logger.getLogger(CAProvider.class);
    private static final Pattern PEM_BLOCK = Pattern.compile(
            "-----BEGIN ([^\\r\\n-]*)-----(.*?)-----END \\1-----", Pattern.DOTALL);

    private final Path certFile;
    private final Path keyFile;
    private final String name;
    /** The files' content last loaded successfully (upstream's certKeyPair). */
    private volatile Content loaded;
    /** The CA made of it (upstream's caValue), with the content it was made of. */
    private volatile Current current;
    private volatile String lastReloadError;

    private record Content(byte[] cert, byte[] key) {
        boolean sameAs(Content o) {
            return Arrays.equals(cert, o.cert) && Arrays.equals(key, o.key);
        }
    }

    private record Current(Content content, CertificateAuthority ca) {
    }

    /** Upstream's newCAProvider. */
    CAProvider(String certFile, String keyFile) throws CAException {
        if (certFile.isEmpty() || keyFile.isEmpty()) {
            throw new CAException("error reading CA cert file \"" + certFile + "\": missing filename for serving cert");
        }
        this.certFile = Path.of(certFile);
        this.keyFile = Path.of(keyFile);
        this.name = "csr-controller::" + certFile + "::" + keyFile;
        try {
            loaded = loadCertKeyPair();
        } catch (CAException e) {
            throw new CAException("error reading CA cert file \"" + certFile + "\": " + e.getMessage());
        }
        current = new Current(loaded, setCA(loaded));
    }

    /** An error reading the CA; its message names files, never their content. */
    static final class CAException extends Exception {
        CAException(String message) {
            super(message, null, false, false);
        }
    }

    /** Upstream's currentCA, after the loader has looked at the files again. */
    CertificateAuthority currentCA() throws CAException {
        reload();
        Content content = loaded;
        Current curr = current;
        if (curr.content().sameAs(content)) {
            return curr.ca();
        }
        CertificateAuthority ca = setCA(content);
        current = new Current(content, ca);
        return ca;
    }

    /** The loader's work item: a pair that loads replaces the loaded one; one that does not is logged. */
    private void reload() {
        try {
            Content fresh = loadCertKeyPair();
            lastReloadError = null;
            if (!fresh.sameAs(loaded)) {
                loaded = fresh;
                LOG.infof("Loaded a new cert/key pair: name %s", name);
            }
        } catch (CAException e) {
            if (!e.getMessage().equals(lastReloadError)) {
                lastReloadError = e.getMessage();
                LOG.errorf("%s failed with : %s", name, e.getMessage());
            }
        }
    }

    /** Upstream's loadCertKeyPair: both files, non-empty, making a key pair (tls.X509KeyPair). */
    private Content loadCertKeyPair() throws CAException {
        byte[] cert = read(certFile);
        byte[] key = read(keyFile);
        if (cert.length == 0 || key.length == 0) {
            throw new CAException("missing content for serving cert \"" + name + "\"");
        }
        Content previous = loaded;
        if (previous != null && Arrays.equals(previous.cert(), cert) && Arrays.equals(previous.key(), key)) {
            return previous; // unchanged: validated when it was loaded
        }
        List<X509Certificate> certs = parseCerts(cert);
        if (certs.isEmpty()) {
            throw new CAException("tls: failed to find any PEM data in certificate input");
        }
        PrivateKeys.KeyPair pair = parseKey(key);
        if (!Arrays.equals(pair.publicKey().getEncoded(), certs.get(0).getPublicKey().getEncoded())) {
            throw new CAException("tls: private key does not match public key");
        }
        return new Content(cert, key);
    }

    /** Upstream's setCA: exactly one certificate, and its key. */
    private CertificateAuthority setCA(Content content) throws CAException {
        List<X509Certificate> certs = parseCerts(content.cert());
        if (certs.isEmpty()) {
            throw new CAException("error reading CA cert file \"" + name
                    + "\": data does not contain any valid RSA or ECDSA certificates");
        }
        if (certs.size() != 1) {
            throw new CAException("error reading CA cert file \"" + name + "\": expected 1 certificate, found "
                    + certs.size());
        }
        PrivateKeys.KeyPair pair;
        try {
            pair = parseKey(content.key());
        } catch (CAException e) {
            throw new CAException("error reading CA key file \"" + name + "\": " + e.getMessage());
        }
        try {
            return new CertificateAuthority(certs.get(0), pair.privateKey());
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new CAException("error reading CA cert file \"" + name + "\": malformed certificate");
        }
    }

    private static byte[] read(Path file) throws CAException {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new CAException("open " + file + ": no such file or directory");
        } catch (AccessDeniedException e) {
            throw new CAException("open " + file + ": permission denied");
        } catch (IOException e) {
            throw new CAException("read " + file + ": " + e.getClass().getSimpleName());
        }
    }

    /** client-go's ParseCertsPEM: every CERTIFICATE block (other blocks skipped). */
    private static List<X509Certificate> parseCerts(byte[] pem) throws CAException {
        List<X509Certificate> certs = new ArrayList<>();
        Matcher m = PEM_BLOCK.matcher(new String(pem, StandardCharsets.ISO_8859_1));
        while (m.find()) {
            if (!"CERTIFICATE".equals(m.group(1))) {
                continue;
            }
            try {
                byte[] der = Base64.getMimeDecoder().decode(m.group(2).getBytes(StandardCharsets.ISO_8859_1));
                certs.add((X509Certificate) CertificateFactory.getInstance("X.509")
                        .generateCertificate(new ByteArrayInputStream(der)));
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                throw new CAException("x509: malformed certificate");
            }
        }
        return certs;
    }

    private static PrivateKeys.KeyPair parseKey(byte[] pem) throws CAException {
        try {
            return PrivateKeys.fromPem(new String(pem, StandardCharsets.ISO_8859_1), "key input");
        } catch (IOException e) {
            throw new CAException("tls: failed to parse private key");
        }
    }
}
