// Offline contingency across a certificate renewal, against the real `balcao service` process
// over real HTTP: the terminal signs a receipt with the company's certificate A while offline,
// the company's certificate is renewed to B with `balcao company update` (another process) while
// the service runs, and the receipt arrives afterwards.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { formatBrasilia } from '../base/common/brasilia.ts';
import { contingencyXml, nfceBody, readDb, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

let service: ServiceProcess;
let a: TestCompany;

beforeAll(async () => {
  service = await startService();
  a = await registerCompany(service.url, service.dataDir);
});

afterAll(async () => {
  await service?.stop();
});

const signingCertificateOf = (xml: string) => /<X509Certificate>([^<]+)<\/X509Certificate>/.exec(xml)?.[1]?.replace(/\s+/g, '');
const base64Of = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

/** The service's database files as they are on disk now (main file and WAL). */
function databaseBytes(): Buffer {
  const file = join(service.dataDir, 'service.sqlite');
  return Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
}

const middleOf = (bytes: Buffer) => bytes.subarray(Math.floor(bytes.length / 2) - 32, Math.floor(bytes.length / 2) + 32);

type SealedCertificate = { certificado_pfx_enc: Buffer; certificado_senha_enc: Buffer };

const RENEWED_PASSWORD = 'senha-do-certificado-de-2027';
let renewal: ReturnType<typeof generateTestCertificate>;
let sealedA: SealedCertificate;
let replacedAt: string;

describe('offline contingency across a certificate renewal made while the service runs', () => {
  it('a receipt signed with certificate A before the renewal to B is transmitted after it: 202, authorized, same key and digest', async () => {
    // The service is signing with A (and has it cached) when the terminal goes offline.
    const online = await a.client.post('/api/v1/nfce', nfceBody(1));
    const onlineDoc = await waitFor(a.client, online.body.id);
    expect(onlineDoc.status).toBe('autorizado');
    const offline = contingencyXml(a, 2);

    sealedA = readDb(
      service.dataDir,
      (db) => db.prepare('SELECT certificado_pfx_enc, certificado_senha_enc FROM companies WHERE id = ?').get(a.companyId) as SealedCertificate,
    );
    renewal = generateTestCertificate({ cnpj: a.cnpj, xNome: 'LOJA RENOVADA', password: RENEWED_PASSWORD });
    const dir = tempDataDir('balcao-pfx-');
    writeFileSync(join(dir, 'renovado.pfx'), renewal.pfx);
    writeFileSync(join(dir, 'senha.txt'), `${RENEWED_PASSWORD}\n`, { mode: 0o600 });
    const res = await runCli([
      'company',
      'update',
      '--data',
      service.dataDir,
      '--empresa',
      a.companyId,
      '--certificado',
      join(dir, 'renovado.pfx'),
      '--senha-arquivo',
      join(dir, 'senha.txt'),
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed.certificado.sha256).toBe(renewal.certificate.fingerprint256);
    expect(printed.certificados_substituidos).toEqual([
      {
        sha256: a.certificate.fingerprint256,
        valido_de: a.certificate.notBefore.toISOString(),
        valido_ate: a.certificate.notAfter.toISOString(),
        substituido_em: printed.atualizada_em,
      },
    ]);
    replacedAt = printed.atualizada_em;

    const posted = await a.client.post('/api/v1/nfce', { xml: offline.xml });
    expect(posted.status, posted.text).toBe(202);
    expect(posted.body.chave).toBe(offline.key);
    const doc = await waitFor(a.client, posted.body.id);
    expect(doc).toMatchObject({ status: 'autorizado', codigo_status: '100', contingencia: true, chave: offline.key, numero: 2 });
    const proc = (await a.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
    expect(proc).toContain(offline.xml);
    expect(proc).toContain(`<digVal>${offline.digestValue}</digVal>`);
    expect(signingCertificateOf(proc)).toBe(base64Of(a.certificate.certificatePem));

    // Online receipts are signed by the service with the current certificate, B.
    const next = await waitFor(a.client, (await a.client.post('/api/v1/nfce', nfceBody(3))).body.id);
    expect(next.status).toBe('autorizado');
    expect(signingCertificateOf((await a.client.get(`/api/v1/nfce/${next.id}/xml`)).text)).toBe(base64Of(renewal.certificate.certificatePem));
  });

  it('a receipt signed with A dated after the renewal is refused (422 validacao), naming when A was replaced; nothing is stored', async () => {
    // The first whole second after the replacement: dhEmi has no fractions.
    const dhEmi = new Date(Math.floor(Date.parse(replacedAt) / 1000) * 1000 + 1000);
    const late = contingencyXml(a, 4, a.certificate, dhEmi);
    const res = await a.client.post('/api/v1/nfce', { xml: late.xml });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({
      code: 'validacao',
      message: 'O XML de contingência não pode ser aceito; veja os detalhes.',
      details: [
        {
          field: 'xml',
          message:
            `assinada com um certificado que a empresa substituiu em ${formatBrasilia(new Date(replacedAt))}, mas emitida depois disso ` +
            `(dhEmi ${formatBrasilia(dhEmi)}): uma NFC-e emitida após a substituição deve ser assinada com o certificado atual`,
        },
      ],
    });
    expect(readDb(service.dataDir, (db) => db.prepare('SELECT count(*) FROM nfce_documents WHERE chave = ?').pluck().get(late.key))).toBe(0);
  });

  it("a receipt signed with a certificate that was never the company's is refused as before", async () => {
    const stranger = generateTestCertificate({ cnpj: a.cnpj, xNome: 'CERTIFICADO QUE NUNCA FOI DA LOJA' }).certificate;
    const res = await a.client.post('/api/v1/nfce', { xml: contingencyXml(a, 5, stranger).xml });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validacao');
    expect(res.body.error.details).toEqual([
      { field: 'xml', message: 'assinada com um certificado que não é o certificado digital cadastrado para a empresa' },
    ]);
  });

  it("keeps no private key of the replaced certificate A in the database files, sealed or in clear; only A's public facts", () => {
    const bytes = databaseBytes();
    // The search finds what is there: A's fingerprint (its row of replaced certificates) and B's sealed .pfx.
    expect(bytes.includes(Buffer.from(a.certificate.fingerprint256))).toBe(true);
    const sealedB = readDb(service.dataDir, (db) => db.prepare('SELECT certificado_pfx_enc FROM companies WHERE id = ?').pluck().get(a.companyId) as Buffer);
    expect(bytes.includes(middleOf(sealedB))).toBe(true);

    expect(bytes.includes(middleOf(sealedA.certificado_pfx_enc)), "A's sealed .pfx").toBe(false);
    expect(bytes.includes(sealedA.certificado_senha_enc), "A's sealed password").toBe(false);
    const keyDer = Buffer.from(base64Of(a.certificate.privateKeyPem), 'base64');
    expect(bytes.includes(middleOf(keyDer)), "A's private key (DER)").toBe(false);
    expect(bytes.includes(Buffer.from(base64Of(a.certificate.privateKeyPem).slice(200, 264))), "A's private key (PEM)").toBe(false);

    const columns = readDb(service.dataDir, (db) => (db.prepare('PRAGMA table_info(replaced_certificates)').all() as { name: string }[]).map((c) => c.name));
    expect(columns).toEqual(['id', 'company_id', 'sha256', 'not_before', 'not_after', 'replaced_at']);
  });
});
