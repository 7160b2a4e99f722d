package dev.outboxkit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority made for this run and one server certificate it signed, as PEM files: what a TLS
 * server under test ({@link SecureKafka}, {@link LocalPostgres.Builder#secure}) presents and what its clients
 * trust. Keys are EC P-256 (fast to make), certificates valid for a day, the server's names
 * ({@code localhost}, {@code 127.0.0.1} and any given) in its subject alternative names.
 *
 * <pre>{@code
 * TestCertificates certs = TestCertificates.create();     // ~0.2 s
 * certs.caCertificate();          // CA cert PEM: the clients' truststore (ssl.truststore.location, sslrootcert)
 * certs.serverCertificate();      // server cert PEM (leaf, then the CA)
 * certs.serverKey();              // server private key, PKCS#8 PEM, unencrypted, mode 0600
 * certs.serverKeyAndCertificate(); // key and chain in one PEM file (Kafka's ssl.keystore.type=PEM)
 * }</pre>
 *
 * <p>{@link #create(String...)} makes a fresh authority each time, so a second one is an authority a client does
 * not trust: the test for "untrusted certificate" needs nothing else.
 */
public final class TestCertificates {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path directory;
    private final String caName;
    private final List<String> serverNames;

    private TestCertificates(Path directory, String caName, List<String> serverNames) {
        this.directory = directory;
        this.caName = caName;
        this.serverNames = serverNames;
    }

    /**
     * A new authority and a server certificate for {@code localhost}, {@code 127.0.0.1} and {@code extraNames}
     * (host names or IP addresses), written to a new temporary directory.
     */
    public static TestCertificates create(String... extraNames) {
        try {
            return create(Files.createTempDirectory("outboxkit-certs-"), extraNames);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for test certificates", e);
        }
    }

    /** As {@link #create(String...)}, into {@code directory} (created when missing). */
    public static TestCertificates create(Path directory, String... extraNames) {
        List<String> names = new java.util.ArrayList<>(List.of("localhost", "127.0.0.1"));
        names.addAll(List.of(extraNames));
        String caName = "outboxkit test CA " + Long.toHexString(RANDOM.nextLong() & Long.MAX_VALUE);
        try {
            Files.createDirectories(directory);
            KeyPair caKeys = keyPair();
            X509Certificate ca = sign(new X500Name("CN=" + caName), caKeys, new X500Name("CN=" + caName), caKeys, true,
                    List.of());
            KeyPair serverKeys = keyPair();
            X509Certificate server = sign(new X500Name("CN=localhost"), serverKeys, new X500Name("CN=" + caName),
                    caKeys, false, names);
            TestCertificates certs = new TestCertificates(directory, caName, List.copyOf(names));
            Files.writeString(certs.caCertificate(), pem("CERTIFICATE", ca.getEncoded()));
            String chain = pem("CERTIFICATE", server.getEncoded()) + pem("CERTIFICATE", ca.getEncoded());
            Files.writeString(certs.serverCertificate(), chain);
            String key = pem("PRIVATE KEY", serverKeys.getPrivate().getEncoded());
            writeSecret(certs.serverKey(), key);
            writeSecret(certs.serverKeyAndCertificate(), key + chain);
            return certs;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write test certificates to " + directory, e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make test certificates: " + e, e);
        }
    }

    /** The authority's certificate (PEM): what clients trust. */
    public Path caCertificate() {
        return directory.resolve("ca.pem");
    }

    /** The server's certificate chain (PEM): its certificate, then the authority's. */
    public Path serverCertificate() {
        return directory.resolve("server.pem");
    }

    /** The server's private key (PKCS#8 PEM, unencrypted; owner read/write only). */
    public Path serverKey() {
        return directory.resolve("server.key");
    }

    /** The server's key followed by its certificate chain, in one PEM file (Kafka: {@code ssl.keystore.type=PEM}). */
    public Path serverKeyAndCertificate() {
        return directory.resolve("server-key-and-chain.pem");
    }

    /** The authority's common name, unique to this run (messages about an untrusted certificate name it). */
    public String caName() {
        return caName;
    }

    /** The names in the server certificate's subject alternative names. */
    public List<String> serverNames() {
        return serverNames;
    }

    public Path directory() {
        return directory;
    }

    private static KeyPair keyPair() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return generator.generateKeyPair();
    }

    private static X509Certificate sign(X500Name subject, KeyPair subjectKeys, X500Name issuer, KeyPair issuerKeys,
            boolean authority, List<String> names) throws GeneralSecurityException, OperatorCreationException,
            IOException {
        Instant now = Instant.now();
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer, new BigInteger(64, RANDOM).abs(),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), subject,
                subjectKeys.getPublic());
        JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
        builder.addExtension(Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(subjectKeys.getPublic()));
        builder.addExtension(Extension.authorityKeyIdentifier, false, utils.createAuthorityKeyIdentifier(issuerKeys.getPublic()));
        if (authority) {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        } else {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            GeneralName[] sans = names.stream()
                    .map(n -> new GeneralName(n.matches("[0-9.]+|.*:.*") ? GeneralName.iPAddress : GeneralName.dNSName, n))
                    .toArray(GeneralName[]::new);
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans));
        }
        PrivateKey signer = issuerKeys.getPrivate();
        return new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer)));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static void writeSecret(Path file, String content) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, content);
    }
}
