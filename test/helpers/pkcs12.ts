// PKCS#12 and PEM, one into the other, for tests that configure a PSP's client certificate.
import forge from 'node-forge';

/** A .pfx's certificate and key as PEM. */
export function pemOfPfx({ pfx, password }: { pfx: Buffer; password: string }): { certPem: string; keyPem: string } {
  const p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(pfx.toString('binary')), password);
  const cert = p12.getBags({ bagType: forge.pki.oids.certBag! })[forge.pki.oids.certBag!]![0]!.cert!;
  const key = p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag! })[forge.pki.oids.pkcs8ShroudedKeyBag!]![0]!.key!;
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(key) };
}

/** A PEM certificate and key packed as a .pfx with `password` (3DES, which OpenSSL 3 opens without the legacy provider). */
export function pfxOfPem({ certPem, keyPem }: { certPem: string; keyPem: string }, password: string): Buffer {
  const asn1 = forge.pkcs12.toPkcs12Asn1(forge.pki.privateKeyFromPem(keyPem), [forge.pki.certificateFromPem(certPem)], password, { algorithm: '3des' });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}
