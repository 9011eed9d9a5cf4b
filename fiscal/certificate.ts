// A1 certificates (PKCS#12 .pfx files) of ICP-Brasil e-CNPJ holders.
//
// Parsed with node-forge rather than Node's OpenSSL: many stores still hold .pfx files encrypted
// with RC2-40, which OpenSSL 3 (Node >= 17) refuses with "unsupported" unless the legacy provider
// is loaded process-wide (nodejs/node#40672). forge reads both the old and the current formats.

import { generateKeyPair, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';
import { FieldError } from './errors.ts';
import { formatDateBR } from '../base/common/brasilia.ts';
import { CNPJ_PATTERN } from '../base/common/tax-ids.ts';

export type Certificate = {
  privateKeyPem: string;
  certificatePem: string;
  /** CNPJ of the holder, from the ICP-Brasil subject (CN "NAME:CNPJ") or the SAN OID 2.16.76.1.3.3. */
  cnpj: string;
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  /** SHA-256 fingerprint, for display and for matching a signed document's certificate. */
  fingerprint256: string;
};

export type LoadOptions = {
  /** The company's CNPJ: a certificate of another holder is refused. */
  expectedCnpj?: string;
  /** Reference instant for the validity check (the sandbox clock, in tests). */
  now?: Date;
};

const OID_CNPJ = '2.16.76.1.3.3';

function cnpjFromSan(cert: forge.pki.Certificate): string | undefined {
  // ICP-Brasil puts the CNPJ in a subjectAltName otherName; forge leaves otherName undecoded, so
  // walk the raw extension: SEQUENCE of [0] { OID, [0] { OCTET/PRINTABLE/UTF8 STRING } }.
  const ext = cert.getExtension('subjectAltName') as { value?: string } | undefined;
  if (!ext?.value) return undefined;
  try {
    const seq = forge.asn1.fromDer(ext.value);
    for (const name of seq.value as forge.asn1.Asn1[]) {
      if (name.tagClass !== forge.asn1.Class.CONTEXT_SPECIFIC || name.type !== 0) continue;
      const [oid, wrapped] = name.value as forge.asn1.Asn1[];
      if (!oid || forge.asn1.derToOid(oid.value as string) !== OID_CNPJ) continue;
      const inner = (wrapped?.value as forge.asn1.Asn1[] | undefined)?.[0];
      const raw = typeof inner?.value === 'string' ? inner.value : '';
      const digits = raw.replace(/[^0-9A-Z]/g, '');
      if (digits.length >= 14) return digits.slice(-14);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** The holder's CNPJ at the end of an ICP-Brasil common name ("NAME:CNPJ"), numeric or alphanumeric. */
export function cnpjOfCommonName(cn: string | undefined): string | undefined {
  return cn ? new RegExp(`:(${CNPJ_PATTERN})\\s*$`).exec(cn)?.[1] : undefined;
}

function describeName(name: forge.pki.Certificate['subject']): string {
  return name.attributes.map((a: forge.pki.CertificateField) => `${a.shortName ?? a.name}=${String(a.value)}`).join(', ');
}

/** Loads a .pfx with its password and checks validity and holder. Errors name the field. */
export function loadPfx(pfx: Buffer, password: string, options: LoadOptions = {}): Certificate {
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(pfx.toString('binary')));
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch (err) {
    const msg = (err as Error).message ?? '';
    if (/password|MAC|mac/i.test(msg)) throw new FieldError('senha', 'senha do certificado incorreta');
    throw new FieldError('certificado', 'arquivo de certificado ilegível (esperado um .pfx/.p12 A1)');
  }

  const bagsOf = (oid: string | undefined): forge.pkcs12.Bag[] => (oid ? (p12.getBags({ bagType: oid })[oid] ?? []) : []);
  const keyBags = [...bagsOf(forge.pki.oids.pkcs8ShroudedKeyBag), ...bagsOf(forge.pki.oids.keyBag)];
  const certBags = bagsOf(forge.pki.oids.certBag);
  const key = keyBags.find((b) => b.key)?.key as forge.pki.rsa.PrivateKey | undefined;
  if (!key) throw new FieldError('certificado', 'o arquivo não contém a chave privada');

  // The holder's certificate is the one whose public key matches the private key (the file may
  // also carry the issuing chain).
  const holder = certBags
    .map((b) => b.cert)
    .find((c): c is forge.pki.Certificate => {
      const pub = c?.publicKey as forge.pki.rsa.PublicKey | undefined;
      return !!pub && pub.n.equals(key.n) && pub.e.equals(key.e);
    });
  if (!holder) throw new FieldError('certificado', 'o arquivo não contém o certificado da chave privada');
  return certificateOf(holder, key, options);
}

/** The holder's certificate and key, checked for a CNPJ, validity and (when given) the company's CNPJ. */
function certificateOf(holder: forge.pki.Certificate, key: forge.pki.rsa.PrivateKey, options: LoadOptions): Certificate {
  const cn = holder.subject.getField('CN')?.value as string | undefined;
  const cnpj = cnpjFromSan(holder) ?? cnpjOfCommonName(cn);
  if (!cnpj) throw new FieldError('certificado', 'certificado sem CNPJ do titular (não é um e-CNPJ)');

  const certificatePem = forge.pki.certificateToPem(holder);
  const certificate: Certificate = {
    privateKeyPem: forge.pki.privateKeyToPem(key),
    certificatePem,
    cnpj,
    subject: describeName(holder.subject),
    issuer: describeName(holder.issuer),
    notBefore: holder.validity.notBefore,
    notAfter: holder.validity.notAfter,
    fingerprint256: new X509Certificate(certificatePem).fingerprint256,
  };

  const now = options.now ?? new Date();
  if (now > certificate.notAfter) {
    throw new FieldError('certificado', `certificado vencido em ${formatDateBR(certificate.notAfter)}`);
  }
  if (now < certificate.notBefore) {
    throw new FieldError('certificado', `certificado válido somente a partir de ${formatDateBR(certificate.notBefore)}`);
  }
  if (options.expectedCnpj && options.expectedCnpj !== cnpj) {
    throw new FieldError('certificado', `o certificado é do CNPJ ${cnpj}, não do CNPJ da empresa ${options.expectedCnpj}`);
  }
  return certificate;
}

/** The SHA-256 fingerprint of a PEM certificate, in the form of `Certificate.fingerprint256`. */
export function fingerprint256Of(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

/** True when two PEM certificates are the same certificate (compared by DER fingerprint). */
export function sameCertificate(aPem: string, bPem: string): boolean {
  return fingerprint256Of(aPem) === fingerprint256Of(bPem);
}

export type TestCertificateOptions = {
  cnpj: string;
  xNome: string;
  notBefore?: Date;
  notAfter?: Date;
  password?: string;
};

/**
 * What forge's cert.sign(key, sha256) does, with the RSA operation in OpenSSL: forge's pure-JS
 * modular exponentiation took 30 to 90 ms of every demo store's first start.
 */
function signWithOpenSsl(cert: forge.pki.Certificate, privateKey: KeyObject): void {
  const oid = forge.pki.oids['sha256WithRSAEncryption']!;
  cert.signatureOid = oid;
  cert.siginfo.algorithmOid = oid;
  // Present in forge (x509.js) though missing from its type definitions.
  const { getTBSCertificate } = forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 };
  const tbs = getTBSCertificate(cert);
  const der = Buffer.from(forge.asn1.toDer(tbs).getBytes(), 'binary');
  cert.signature = sign('sha256', der, privateKey).toString('binary');
}

/**
 * A self-signed certificate shaped like an ICP-Brasil e-CNPJ A1 (CN "NAME:CNPJ", the CNPJ also
 * in the SAN otherName 2.16.76.1.3.3), packed as a .pfx. For the sandbox and tests only: no
 * tax authority accepts it.
 */
export function generateTestCertificate(options: TestCertificateOptions): TestCertificate {
  // Key generation in OpenSSL: forge's pure-JS RSA takes seconds for 2048 bits.
  return packTestCertificate(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, options);
}

/**
 * The same, with the key generated on libuv's thread pool: RSA-2048 key generation takes 40 to
 * 200 ms here, which a first start spends on another core while it opens its databases.
 */
export async function generateTestCertificateAsync(options: TestCertificateOptions): Promise<TestCertificate> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  return packTestCertificate(privateKey, options);
}

export type TestCertificate = { pfx: Buffer; password: string; certificate: Certificate };

function packTestCertificate(privateKey: KeyObject, options: TestCertificateOptions): TestCertificate {
  const password = options.password ?? randomBytes(12).toString('base64url');
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = '01' + randomBytes(8).toString('hex');
  const notBefore = options.notBefore ?? new Date(Date.now() - 60_000);
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = options.notAfter ?? new Date(notBefore.getTime() + 365 * 24 * 3600_000);
  const attrs = [
    { shortName: 'C', value: 'BR' },
    { shortName: 'O', value: 'ICP-Brasil' },
    { shortName: 'OU', value: 'Certificado de TESTE do Balcão - sem validade jurídica' },
    { shortName: 'CN', value: `${options.xNome}:${options.cnpj}` },
  ];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  const otherNameCnpj = forge.asn1.create(forge.asn1.Class.CONTEXT_SPECIFIC, 0, true, [
    forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.OID, false, forge.asn1.oidToDer(OID_CNPJ).getBytes()),
    forge.asn1.create(forge.asn1.Class.CONTEXT_SPECIFIC, 0, true, [
      forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.OCTETSTRING, false, options.cnpj),
    ]),
  ]);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, keyEncipherment: true },
    { name: 'extKeyUsage', clientAuth: true, emailProtection: true },
    {
      name: 'subjectAltName',
      value: forge.asn1.toDer(forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SEQUENCE, true, [otherNameCnpj])).getBytes(),
    },
  ]);
  signWithOpenSsl(cert, privateKey);
  const p12 = forge.pkcs12.toPkcs12Asn1(key, [cert], password, { algorithm: '3des', friendlyName: options.xNome });
  const pfx = Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary');
  const now = new Date(Math.max(Date.now(), notBefore.getTime()));
  // Described from the certificate as encoded (its dates in whole seconds, as a reader of the
  // file sees them), not by decrypting the file back: forge's PKCS#12 decryption is pure JS, tens
  // of ms at every demo store's first start.
  const encoded = forge.pki.certificateFromPem(forge.pki.certificateToPem(cert));
  return { pfx, password, certificate: certificateOf(encoded, key, { now: now > cert.validity.notAfter ? notBefore : now }) };
}
