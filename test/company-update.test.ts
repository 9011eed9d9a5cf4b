// `balcao company update` and `balcao company token` against the real `balcao service` process,
// over real HTTP: every change is made by the CLI, in another process, while the service runs,
// and shows on the service's very next request. Company A's CNPJ has letters (alphanumeric, drawn
// by the generator): registered, updated, its certificate renewed and its receipts issued like any other.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCnpj } from '@brazilian-utils/brazilian-utils/generate-cnpj';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { nfceBody, readDb, registerCompany, waitFor, type Client, type TestCompany } from './helpers/nfce.ts';
import { api, runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

let service: ServiceProcess;
let a: TestCompany;
let b: TestCompany;

beforeAll(async () => {
  service = await startService();
  // A without a CSC, as a store that registered before it had one; B complete.
  a = await registerCompany(service.url, service.dataDir, { csc: false, cnpj: generateCnpj({ version: 2 }) });
  b = await registerCompany(service.url, service.dataDir);
});

afterAll(async () => {
  await service?.stop();
});

const update = (companyId: string, options: string[]) => runCli(['company', 'update', '--data', service.dataDir, '--empresa', companyId, ...options]);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any>;
const companyRow = (companyId: string): Row => readDb(service.dataDir, (db) => db.prepare('SELECT * FROM companies WHERE id = ?').get(companyId) as Row);

/** Posts an NFC-e and waits for its verdict. */
async function issue(client: Client, nNF: number) {
  const res = await client.post('/api/v1/nfce', nfceBody(nNF));
  expect(res.status, res.text).toBe(202);
  return waitFor(client, res.body.id);
}

/** The base64 body of the X509Certificate in a signed XML, and of a PEM certificate. */
const signingCertificateOf = (xml: string) => /<X509Certificate>([^<]+)<\/X509Certificate>/.exec(xml)?.[1]?.replace(/\s+/g, '');
const base64Of = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

function certificateFile(cnpj: string, password: string) {
  const { pfx, certificate } = generateTestCertificate({ cnpj, xNome: 'LOJA RENOVADA', password });
  const dir = tempDataDir('balcao-pfx-');
  writeFileSync(join(dir, 'novo.pfx'), pfx);
  writeFileSync(join(dir, 'senha.txt'), `${password}\n`, { mode: 0o600 });
  return { pfx, certificate, file: join(dir, 'novo.pfx'), passwordFile: join(dir, 'senha.txt') };
}

const NEW_CSC = { id: '000007', token: 'CSC-DA-LOJA-RECEBIDO-DEPOIS-2027' };
const NEW_PASSWORD = 'senha-do-certificado-renovado';
let renewed: ReturnType<typeof certificateFile>;
let issuedByA: string;

describe('company update while the service runs', () => {
  it('a company without a CSC gets 422 csc_nao_configurado; after update --csc-id --csc its NFC-e is authorized with that CSC', async () => {
    const refused = await a.client.post('/api/v1/nfce', nfceBody(1));
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('csc_nao_configurado');

    const res = await update(a.companyId, ['--csc-id', NEW_CSC.id, '--csc', NEW_CSC.token]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toMatchObject({ company_id: a.companyId, cnpj: a.cnpj, uf: 'SP', csc_id: NEW_CSC.id, ambiente: 'homologacao' });
    expect(res.stdout).not.toContain(NEW_CSC.token);

    const doc = await issue(a.client, 1);
    expect(doc).toMatchObject({ status: 'autorizado', codigo_status: '100' });
    issuedByA = doc.id;
    // QR Code v2 online: chave|2|tpAmb|cIdToken (no leading zeros)|SHA-1(the rest + CSC): made with the new CSC.
    const [key, version, tpAmb, idToken, hash] = (doc.qrcode as string).split('?p=')[1]!.split('|');
    expect([key, version, tpAmb, idToken]).toEqual([doc.chave, '2', '2', String(Number(NEW_CSC.id))]);
    const expected = createHash('sha1').update(`${key}|2|${tpAmb}|${idToken}${NEW_CSC.token}`).digest('hex');
    expect(hash!.toLowerCase()).toBe(expected);
  });

  it('a renewed certificate (password from a file) signs the next NFC-e, and the new address is on it', async () => {
    renewed = certificateFile(a.cnpj, NEW_PASSWORD);
    const res = await update(a.companyId, ['--certificado', renewed.file, '--senha-arquivo', renewed.passwordFile, '--logradouro', 'Avenida Renovada']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed.certificado).toEqual({
      titular: renewed.certificate.subject,
      emissor: renewed.certificate.issuer,
      cnpj: a.cnpj,
      valido_de: renewed.certificate.notBefore.toISOString(),
      valido_ate: renewed.certificate.notAfter.toISOString(),
      sha256: renewed.certificate.fingerprint256,
    });
    expect(printed.endereco.logradouro).toBe('Avenida Renovada');
    expect(printed.csc_id).toBe(NEW_CSC.id); // kept: only the given options change
    expect(res.stdout).not.toContain(NEW_PASSWORD);

    const doc = await issue(a.client, 2);
    expect(doc.status).toBe('autorizado');
    const xml = (await a.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
    expect(signingCertificateOf(xml)).toBe(base64Of(renewed.certificate.certificatePem));
    expect(signingCertificateOf(xml)).not.toBe(base64Of(a.certificate.certificatePem));
    expect(xml).toContain('<xLgr>Avenida Renovada</xLgr>');
  });

  it('refuses a certificate of another CNPJ naming --certificado, and changes nothing', async () => {
    const before = companyRow(a.companyId);
    const foreign = certificateFile(b.cnpj, 'senha-de-outra-loja');
    const res = await update(a.companyId, ['--certificado', foreign.file, '--senha', 'senha-de-outra-loja', '--nome', 'NOME QUE NAO FICA']);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(`--certificado: o certificado é do CNPJ ${b.cnpj}, não do CNPJ da empresa ${a.cnpj}\n`);
    expect(companyRow(a.companyId)).toEqual(before);

    // The service still signs with the certificate on file.
    const doc = await issue(a.client, 3);
    const xml = (await a.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
    expect(signingCertificateOf(xml)).toBe(base64Of(renewed.certificate.certificatePem));
    expect(xml).not.toContain('NOME QUE NAO FICA');
  });

  it('keeps the new CSC, certificate and password out of the database files in clear', () => {
    const file = join(service.dataDir, 'service.sqlite');
    const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    expect(bytes.length).toBeGreaterThan(0);
    for (const secret of [NEW_CSC.token, NEW_PASSWORD]) expect(bytes.includes(Buffer.from(secret, 'utf8')), secret).toBe(false);
    const middle = Math.floor(renewed.pfx.length / 2);
    expect(bytes.includes(renewed.pfx.subarray(middle, middle + 64))).toBe(false);
    // What the check looks for is there when stored in clear: the public fingerprint is.
    expect(bytes.includes(Buffer.from(renewed.certificate.fingerprint256))).toBe(true);
  });

  it('names each bad option like create, exits 2, and writes nothing', async () => {
    const before = companyRow(a.companyId);
    const bad = await update(a.companyId, ['--crt', '9', '--cep', '40000000', '--qrcode-versao', '5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--crt: deve ser 1');
    expect(bad.stderr).toContain('--cep: CEP 40000000 não pertence à UF SP');
    expect(bad.stderr).toContain('--qrcode-versao: deve ser 2 ou 3');
    const identity = await update(a.companyId, ['--cnpj', b.cnpj, '--uf', 'RJ']);
    expect(identity.code).toBe(2);
    expect(identity.stderr).toMatch(/^--cnpj: o CNPJ identifica a empresa e não muda.*\n--uf: a UF identifica a empresa/);
    const nothing = await update(a.companyId, []);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/^informe ao menos uma opção a alterar/);
    const wrongPassword = await update(a.companyId, ['--certificado', renewed.file, '--senha', 'errada']);
    expect(wrongPassword.code).toBe(2);
    expect(wrongPassword.stderr).toBe('--senha: senha do certificado incorreta\n');
    const unknown = await update('00000000-0000-0000-0000-000000000000', ['--nome', 'Loja']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^--empresa: empresa 00000000-0000-0000-0000-000000000000 não encontrada/);
    expect(companyRow(a.companyId)).toEqual(before);
  });
});

describe('company token while the service runs', () => {
  it('prints a new token once; the old one gets 401 at once, the new one works, only its hash is stored', async () => {
    const old = a.client;
    const receipt = `/api/v1/nfce/${issuedByA}`;
    expect((await old.get(receipt)).status).toBe(200);

    const res = await runCli(['company', 'token', '--data', service.dataDir, '--empresa', a.companyId]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toEqual({ company_id: a.companyId, token: expect.stringMatching(/^blc_[A-Za-z0-9_-]{43}$/) });
    expect(printed.token).not.toBe(a.token);

    const refused = await old.get(receipt);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('nao_autorizado');
    const renewedClient = api(service.url, printed.token);
    expect((await renewedClient.get(receipt)).status).toBe(200);
    // The company's documents follow the company, not the token.
    expect((await issue(renewedClient, 4)).status).toBe('autorizado');

    const hashes = readDb(service.dataDir, (db) =>
      (db.prepare('SELECT token_sha256 FROM api_tokens WHERE company_id = ?').all(a.companyId) as { token_sha256: Buffer }[]).map((r) => r.token_sha256),
    );
    expect(hashes).toEqual([createHash('sha256').update(printed.token).digest()]);
    const file = join(service.dataDir, 'service.sqlite');
    const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    expect(bytes.includes(Buffer.from(printed.token.slice(4)))).toBe(false);

    const unknown = await runCli(['company', 'token', '--data', service.dataDir, '--empresa', '00000000-0000-0000-0000-000000000000']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^--empresa: empresa .* não encontrada/);
  });
});

describe('tenant isolation', () => {
  it("updating and re-keying company A never touches B: B's settings, token, certificate and CSC are as they were", async () => {
    const before = companyRow(b.companyId);
    const tokensBefore = readDb(service.dataDir, (db) => db.prepare('SELECT * FROM api_tokens WHERE company_id = ?').all(b.companyId));
    const again = certificateFile(a.cnpj, 'mais-uma-senha');
    const res = await update(a.companyId, [
      '--certificado',
      again.file,
      '--senha',
      'mais-uma-senha',
      '--csc-id',
      '000008',
      '--csc',
      'CSC-OUTRO-DE-A',
      '--nome',
      'LOJA A DE NOVO',
    ]);
    expect(res.code).toBe(0);
    expect((await runCli(['company', 'token', '--data', service.dataDir, '--empresa', a.companyId])).code).toBe(0);

    expect(companyRow(b.companyId)).toEqual(before);
    expect(readDb(service.dataDir, (db) => db.prepare('SELECT * FROM api_tokens WHERE company_id = ?').all(b.companyId))).toEqual(tokensBefore);
    const doc = await issue(b.client, 1);
    expect(doc.status).toBe('autorizado');
    expect(doc.qrcode).toContain(`|2|2|1|`); // B's CSC id (000001), not A's new ones
    const xml = (await b.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
    expect(signingCertificateOf(xml)).toBe(base64Of(b.certificate.certificatePem));
  });
});

describe('help', () => {
  it('update and token explain themselves in Portuguese; company alone lists the actions', async () => {
    for (const action of ['update', 'token']) {
      const help = await runCli(['company', action, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Uso: balcao company ${action} \\(--data DIR \\| --database URL\\) --empresa COMPANY_ID`));
      expect(help.stderr).toBe('');
    }
    const overview = await runCli(['company', '--help']);
    expect(overview.stdout).toMatch(/^Uso: balcao company <ação>/);
    expect(overview.stdout).toMatch(/create .*\n.*update .*\n.*token /);
  });
});
