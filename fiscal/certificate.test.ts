import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { generateTestCertificate, generateTestCertificateAsync, loadPfx, sameCertificate } from './certificate.ts';
import { FieldError } from './errors.ts';

const legacyPfx = readFileSync(new URL('./testdata/legacy-rc2-40.pfx', import.meta.url));

function fieldErrorOf(fn: () => unknown): FieldError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FieldError) return err;
    throw err;
  }
  throw new Error('expected a FieldError');
}

describe('loadPfx', () => {
  it('reads an RC2-40 file that OpenSSL 3 refuses', () => {
    expect(() => createSecureContext({ pfx: legacyPfx, passphrase: 'senha-antiga' })).toThrow(/unsupported/i);
    const cert = loadPfx(legacyPfx, 'senha-antiga');
    expect(cert.cnpj).toBe('11222333000181');
    expect(cert.privateKeyPem).toMatch(/BEGIN RSA PRIVATE KEY/);
    expect(cert.notAfter.getUTCFullYear()).toBeGreaterThan(2100);
  });

  it('names the password field when the password is wrong', () => {
    const err = fieldErrorOf(() => loadPfx(legacyPfx, 'errada'));
    expect(err.field).toBe('senha');
    expect(err.message).toMatch(/senha do certificado incorreta/);
  });

  it('refuses a file that is not a PKCS#12', () => {
    expect(fieldErrorOf(() => loadPfx(Buffer.from('not a pfx'), 'x')).field).toBe('certificado');
  });

  it('refuses an expired certificate, saying when it expired', () => {
    const { pfx, password } = generateTestCertificate({
      cnpj: '11222333000181',
      xNome: 'EMPRESA VENCIDA',
      notBefore: new Date('2024-01-01T00:00:00Z'),
      notAfter: new Date('2025-01-01T00:00:00Z'),
    });
    const err = fieldErrorOf(() => loadPfx(pfx, password, { now: new Date('2026-11-22T12:00:00Z') }));
    expect(err.field).toBe('certificado');
    expect(err.message).toMatch(/vencido em (31\/12\/2024|01\/01\/2025)/);
    // The same file is fine at an instant inside its validity.
    expect(loadPfx(pfx, password, { now: new Date('2024-06-01T00:00:00Z') }).cnpj).toBe('11222333000181');
  });

  it("refuses a certificate whose CNPJ is not the company's", () => {
    const { pfx, password } = generateTestCertificate({ cnpj: '11222333000181', xNome: 'OUTRA EMPRESA' });
    const err = fieldErrorOf(() => loadPfx(pfx, password, { expectedCnpj: '45997418000153' }));
    expect(err.field).toBe('certificado');
    expect(err.message).toContain('11222333000181');
    expect(loadPfx(pfx, password, { expectedCnpj: '11222333000181' }).cnpj).toBe('11222333000181');
  });
});

describe('generateTestCertificate', () => {
  it('produces an ICP-Brasil-like e-CNPJ whose CNPJ is also in the SAN otherName', () => {
    const { certificate, pfx, password } = generateTestCertificate({ cnpj: '45997418000153', xNome: 'MERCADO & CIA' });
    expect(certificate.subject).toContain('CN=MERCADO & CIA:45997418000153');
    expect(certificate.subject).toContain('O=ICP-Brasil');
    expect(certificate.cnpj).toBe('45997418000153');
    // What it describes is exactly what a reader of the file finds (dates in whole seconds included).
    expect(loadPfx(pfx, password)).toEqual(certificate);
  });

  it('carries an alphanumeric CNPJ in its common name and its SAN otherName, and is read back as that CNPJ', () => {
    const { certificate, pfx, password } = generateTestCertificate({ cnpj: '12ABC34501DE35', xNome: 'MERCADO ALFA' });
    expect(certificate.subject).toContain('CN=MERCADO ALFA:12ABC34501DE35');
    const san = forge.pki.certificateFromPem(certificate.certificatePem).getExtension('subjectAltName') as { value: string };
    expect(san.value).toContain('12ABC34501DE35');
    expect(loadPfx(pfx, password, { expectedCnpj: '12ABC34501DE35' }).cnpj).toBe('12ABC34501DE35');
    expect(() => loadPfx(pfx, password, { expectedCnpj: '11222333000181' })).toThrow(/CNPJ 12ABC34501DE35/);
  });

  it('is the same certificate when its key is made on the thread pool (generateTestCertificateAsync)', async () => {
    const { certificate, pfx, password } = await generateTestCertificateAsync({ cnpj: '45997418000153', xNome: 'MERCADO & CIA' });
    expect(certificate.cnpj).toBe('45997418000153');
    const x509 = new X509Certificate(certificate.certificatePem);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(sameCertificate(loadPfx(pfx, password).certificatePem, certificate.certificatePem)).toBe(true);
  });

  it('is signed with its own key over exactly what it says (sha256WithRSAEncryption), as OpenSSL checks it', () => {
    const { certificate } = generateTestCertificate({ cnpj: '45997418000153', xNome: 'MERCADO & CIA' });
    const x509 = new X509Certificate(certificate.certificatePem);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.verify(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey)).toBe(false);
    const parsed = forge.pki.certificateFromPem(certificate.certificatePem);
    expect([parsed.siginfo.algorithmOid, parsed.signatureOid]).toEqual(['1.2.840.113549.1.1.11', '1.2.840.113549.1.1.11']);
  });
});
