// A production-mode `balcao service` process and `balcao sefaz status`, with the real SEFAZ
// connector, against the SEFAZ simulator running in this test process: the simulator's own CA
// handed over as a PEM file (--sefaz-ca / BALCAO_SEFAZ_CA), its origin as --sefaz-url, HTTPS with
// mutual TLS on loopback. The simulator is driven from here (late answers, 17-digit protocols,
// paralysis) and every request it received is looked at.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { DEMO_CSC } from '../fiscal/samples.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import type { AuthorityCompany } from '../service/authority/port.ts';
import { SandboxAuthority } from '../service/authority/sandbox.ts';
import { SefazSimulator } from '../service/authority/sefaz/simulator/server.ts';
import { nfceBody, readDb, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { eventually, setUpContingency, storeCompanyWithCertificate, testTerminal } from './terminal-fixtures.ts';
import { keyInSignedXml } from '../fiscal/access-key.ts';

const simDir = mkdtempSync(join(tmpdir(), 'balcao-sefaz-wire-'));
let sandbox: SandboxAuthority;
let sim: SefazSimulator;
let caFile: string;
let dataDir: string;
let service: ServiceProcess;
let company: TestCompany;
const terminals: Terminal[] = [];

const enroll = (c: { companyId: string; cnpj: string; certificate: AuthorityCompany['credentials'] }, csc = DEMO_CSC) =>
  sim.enroll({ id: c.companyId, cnpj: c.cnpj, uf: 'SP', environment: 'homologacao', csc, credentials: c.certificate });

/** The access key inside an enviNFe the simulator received. */
const keyOfMessage = (message: string) => keyInSignedXml(message, 'NFe');

beforeAll(async () => {
  sandbox = new SandboxAuthority({ file: join(simDir, 'sefaz.sqlite'), settings: () => ({ latencyMs: 0, available: true }), clock: () => new Date() });
  sim = await SefazSimulator.start({ authority: sandbox, capture: true });
  caFile = join(simDir, 'simulador-ca.pem');
  writeFileSync(caFile, sim.caPem);
  dataDir = tempDataDir();
  // A one-second timeout: a late answer is a lost answer without making the test wait long.
  service = await startService({
    dataDir,
    mode: 'producao',
    args: ['--sefaz-url', sim.origin, '--sefaz-ca', caFile],
    env: { BALCAO_SEFAZ_TIMEOUT_MS: '1000' },
  });
  company = await registerCompany(service.url, dataDir);
  enroll(company);
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await service?.stop();
  await sim?.close();
  sandbox?.close();
  rmSync(simDir, { recursive: true, force: true });
});

describe('balcao sefaz status', () => {
  const status = (env: Record<string, string>, companyId = company.companyId) =>
    runCli(['sefaz', 'status', '--data', dataDir, '--empresa', companyId], { BALCAO_SEFAZ_URL: sim.origin, ...env });

  it('prints cStat and xMotivo of NFeStatusServico4 and MDFeStatusServico for the company’s UF and environment; exit 0 when both are in operation', async () => {
    const from = sim.requests.length;
    const res = await status({ BALCAO_SEFAZ_CA: caFile });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`(CNPJ ${company.cnpj}), UF SP, ambiente de homologação`);
    expect(res.stdout).toContain(`NFC-e  NFeStatusServico4  ${sim.origin}/ws/NFeStatusServico4.asmx`);
    expect(res.stdout).toContain(`MDF-e  MDFeStatusServico  ${sim.origin}/ws/MDFeStatusServico/MDFeStatusServico.asmx`);
    expect(res.stdout.match(/cStat 107: Serviço em Operação/g)).toHaveLength(2);
    // Sent with the company's own certificate.
    const sent = sim.requests.slice(from);
    expect(sent.map((r) => r.service)).toEqual(['NFeStatusServico4', 'MDFeStatusServico']);
    expect(new Set(sent.map((r) => r.certificate)).size).toBe(1);
  });

  it('a paralysed authority: its cStat printed, exit 1; without the CA, the server is not trusted; an unknown company is bad usage', async () => {
    sim.paralyse('109');
    try {
      const res = await status({ BALCAO_SEFAZ_CA: caFile });
      expect(res.code).toBe(1);
      expect(res.stdout).toContain('cStat 109: Serviço Paralisado sem Previsão');
    } finally {
      sim.paralyse(undefined);
    }
    const untrusted = await status({ BALCAO_SEFAZ_CA: '' });
    expect(untrusted.code).toBe(1);
    expect(untrusted.stdout).toMatch(/NFC-e  sem resposta: Certificado do servidor 127\.0\.0\.1:\d+ não reconhecido .*BALCAO_SEFAZ_CA/);
    const unknown = await status({ BALCAO_SEFAZ_CA: caFile }, '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^--empresa: empresa 00000000-0000-4000-8000-000000000000 não encontrada/);
    const badCa = await status({ BALCAO_SEFAZ_CA: join(simDir, 'nao-existe.pem') });
    expect(badCa.code).toBe(2);
    expect(badCa.stderr).toMatch(/^BALCAO_SEFAZ_CA: não foi possível ler/);
  });
});

describe('produção mode through the connector', () => {
  it('an NFC-e whose answer is lost after the authority committed: consulted, recorded once, never sent under a second key', async () => {
    sim.answerLate(2_500, 1, ['NFeAutorizacao4']);
    const from = sim.requests.length;
    const res = await company.client.post('/api/v1/nfce', nfceBody(1));
    expect(res.status).toBe(202);
    const doc = await waitFor(company.client, res.body.id);
    expect(doc).toMatchObject({ status: 'autorizado', codigo_status: '100', chave: res.body.chave, protocolo: expect.stringMatching(/^\d{15}$/) });

    const sent = sim.requests.slice(from);
    const authorizations = sent.filter((r) => r.service === 'NFeAutorizacao4');
    expect(authorizations.map((r) => keyOfMessage(r.message))).toEqual([res.body.chave]);
    expect(sent.some((r) => r.service === 'NFeConsultaProtocolo4' && r.message.includes(res.body.chave))).toBe(true);
    const atAuthority = readDb(simDir, (db) => db.prepare('SELECT count(*) FROM nfe WHERE cnpj = ? AND number = 1').pluck().get(company.cnpj), 'sefaz.sqlite');
    expect(atAuthority).toBe(1);
    const atService = readDb(dataDir, (db) =>
      db.prepare('SELECT count(*) FROM nfce_documents WHERE company_id = ? AND numero = 1').pluck().get(company.companyId),
    );
    expect(atService).toBe(1);
  });

  it('an MDF-e whose answer is lost: the issuance consults, answers 201 autorizado, and the manifest exists once', async () => {
    sim.answerLate(2_500, 1, ['MDFeRecepcaoSinc']);
    const from = sim.requests.length;
    const res = await company.client.post('/api/v1/mdfe/emitir', sampleMdfeRequest({ nMDF: 7, placa: 'WIR3A01' }));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ situacao: 'autorizado', autorizado: true, protocolo: expect.stringMatching(/^\d{15}$/) });
    expect(sim.requests.slice(from).map((r) => r.service)).toEqual(['MDFeRecepcaoSinc', 'MDFeConsulta']);
    expect(readDb(simDir, (db) => db.prepare('SELECT count(*) FROM mdfe WHERE cnpj = ? AND number = 7').pluck().get(company.cnpj), 'sefaz.sqlite')).toBe(1);
  });

  it('a 17-digit protocol is stored and shown as SEFAZ gave it', async () => {
    sandbox.nfeProtocolDigits = 17;
    try {
      const res = await company.client.post('/api/v1/nfce', nfceBody(2));
      const doc = await waitFor(company.client, res.body.id);
      expect(doc).toMatchObject({ status: 'autorizado', protocolo: expect.stringMatching(/^\d{17}$/) });
      const xml = (await company.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
      expect(xml).toContain(`<nProt>${doc.protocolo}</nProt>`);
    } finally {
      sandbox.nfeProtocolDigits = 15;
    }
  });

  it('a certificate the authority does not accept: 422 naming the certificate, nothing sent, the number still free', async () => {
    const stranger = await registerCompany(service.url, dataDir);
    const from = sim.requests.length;
    const body = sampleMdfeRequest({ nMDF: 1, placa: 'CRT1A23' });
    const refused = await stranger.client.post('/api/v1/mdfe/emitir', body);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('validacao');
    expect(refused.body.error.details).toEqual([{ field: 'certificado', message: expect.stringContaining(`:${stranger.cnpj}`) }]);
    expect(sim.requests.length).toBe(from);
    enroll(stranger);
    const accepted = await stranger.client.post('/api/v1/mdfe/emitir', body);
    expect(accepted.status, accepted.text).toBe(201);
    expect(accepted.body).toMatchObject({ situacao: 'autorizado', numero: 1 });
  });
});

// Last: a paralysed authorizer is left alone for a minute by the connector, which would hold
// back anything after this in the file.
describe('SEFAZ paralysed (108) with a terminal selling', () => {
  it(
    'the stalled sale takes the terminal into offline contingency; the service sends nothing more while the authorizer is paralysed',
    { timeout: 180_000 },
    async () => {
      const store = await storeCompanyWithCertificate(dataDir);
      enroll({ ...store, certificate: store.certificate }, { id: '1', token: 'CSC-DE-TESTE-123456' });
      const terminal = await testTerminal({
        serviceUrl: service.url,
        token: store.token,
        series: 1,
        printerTransport: new MemoryPrinter(),
        authorityTimeoutMs: 1_500,
      });
      terminals.push(terminal);
      const manager = await terminal.createManager({ name: 'Gerente Ana', pin: '2580' });
      const auth = { managerId: manager.id, pin: '2580' };
      await setUpContingency(terminal, store, auth, { failureThreshold: 1 });

      sim.paralyse('108');
      const from = sim.requests.length;
      let sale = await terminal.openSale();
      sale = await terminal.addItem(sale.id, { code: '1001', quantity: '1' });
      sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: 2_000 });
      const stalled = (await terminal.finishSale(sale.id)).receipt;

      const status = await eventually('contingência pela SEFAZ paralisada', async () => {
        const s = await terminal.contingencyStatus();
        return s.active && s;
      });
      expect(status).toMatchObject({ automatic: true, reason: 'SEFAZ sem resposta às autorizações de NFC-e' });
      expect(await terminal.getReceipt(stalled.id)).toMatchObject({ contingency: true, nNF: 2 });
      // The offline receipt reaches the service and waits there; the connector keeps away from the
      // paralysed authorizer: one authorization (the 108), no resend, no status before a minute.
      await eventually('NFC-e de contingência recebida pelo serviço', () => terminal.store.receipts.receipt(stalled.id)!.state === 'processing');
      await new Promise((r) => setTimeout(r, 1_000));
      expect(sim.requests.slice(from).map((r) => [r.service, r.answered])).toEqual([['NFeAutorizacao4', '108']]);
    },
  );
});
