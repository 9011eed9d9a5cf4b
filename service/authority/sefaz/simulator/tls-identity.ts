// A simulator's own TLS identity, made at start-up: a certificate authority that exists only
// in this process and a server certificate it signs for the loopback names (127.0.0.1, ::1,
// localhost). A client trusts the simulator by adding the CA (BALCAO_SEFAZ_CA / --sefaz-ca,
// BALCAO_PIX_CA), as it trusts a real SEFAZ through the ICP-Brasil chain or a bank through its
// roots: real TLS with real certificates, verified, nothing switched off. Where the far side
// asks for mutual TLS (the PSP simulator, as the central bank's security manual asks of PSPs),
// the same CA also signs a client certificate for the test or demo terminal.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export type TlsIdentity = {
  /** The CA certificate (PEM): what a client adds to its trusted roots. */
  caPem: string;
  /** The server's certificate and key (PEM). */
  certPem: string;
  keyPem: string;
  /** A client certificate and key (PEM) the same CA signed, when asked for. */
  client?: { certPem: string; keyPem: string };
};

function rsaKey(): forge.pki.rsa.PrivateKey {
  // OpenSSL generates in milliseconds what forge's pure-JS RSA takes seconds for.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()) as forge.pki.rsa.PrivateKey;
}

function baseCertificate(key: forge.pki.rsa.PrivateKey, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = '01' + randomBytes(8).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 5 * 60_000);
  cert.validity.notAfter = new Date(Date.now() + days * 24 * 3600_000);
  return cert;
}

/**
 * A fresh CA (named after `authority`) and a server certificate for the loopback interface,
 * signed by it; with `clientName`, also a client certificate of that name.
 */
export function createTlsIdentity(authority = 'simulador SEFAZ', clientName?: string): TlsIdentity {
  const caKey = rsaKey();
  const ca = baseCertificate(caKey, 30);
  const caName = [
    { shortName: 'C', value: 'BR' },
    { shortName: 'O', value: 'Balcao' },
    { shortName: 'CN', value: `AC do ${authority} do Balcao (somente testes)` },
  ];
  ca.setSubject(caName);
  ca.setIssuer(caName);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKey, forge.md.sha256.create());

  const key = rsaKey();
  const server = baseCertificate(key, 30);
  server.setSubject([
    { shortName: 'C', value: 'BR' },
    { shortName: 'O', value: 'Balcao' },
    { shortName: 'CN', value: 'localhost' },
  ]);
  server.setIssuer(caName);
  server.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 7, ip: '127.0.0.1' },
        { type: 7, ip: '::1' },
      ],
    },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  server.sign(caKey, forge.md.sha256.create());

  const identity: TlsIdentity = { caPem: forge.pki.certificateToPem(ca), certPem: forge.pki.certificateToPem(server), keyPem: forge.pki.privateKeyToPem(key) };
  if (clientName) {
    const clientKey = rsaKey();
    const client = baseCertificate(clientKey, 30);
    client.setSubject([
      { shortName: 'C', value: 'BR' },
      { shortName: 'O', value: 'Balcao' },
      { shortName: 'CN', value: clientName },
    ]);
    client.setIssuer(caName);
    client.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
      { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
    ]);
    client.sign(caKey, forge.md.sha256.create());
    identity.client = { certPem: forge.pki.certificateToPem(client), keyPem: forge.pki.privateKeyToPem(clientKey) };
  }
  return identity;
}
