// Offline contingency against the real `balcao service` process over real HTTP, twice: once with
// the service process stopped, once with the service up and its (sandbox) authority unavailable.
// Each time the terminal enters contingency by itself, 50 sales are made and issued at the
// terminal (tpEmis 9), each printed in two copies whose QR Code is read back from the printed
// raster with jsQR and whose signature verifies against the company's certificate; then the
// outage ends and every one of them becomes `autorizado` at the service with the access key and
// the DigestValue that were printed, none issued twice (the service's and the authority's own
// SQLite files are read), nothing printed again, and the terminal leaves contingency by itself.
// The service has a technical responsible: the terminal learns it when it claims its series and
// writes infRespTec, with the hashCSRT of each key, in the receipts it signs offline.

import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { generateTestCertificate, sameCertificate } from '../fiscal/certificate.ts';
import { digestValueOf, verifyXmlSignature } from '../fiscal/signature.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import type { ReceiptView } from '../electron/api/terminal-api.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { decodeEscPos, imageToRgba, readQr } from './escpos-decoder.ts';
import { hashCsrt } from '../fiscal/resp-tec.ts';
import { nfceBody, readDb } from './helpers/nfce.ts';
import { api, runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { eventually, setUpContingency, storeCompanyWithCertificate, testTerminal } from './terminal-fixtures.ts';
import { ACCESS_KEY_PATTERN } from '../base/common/access-key.ts';

const SALES = 50;
const CSRT = 'CSRT-DA-IMPLANTACAO-1';

let service: ServiceProcess;
let serviceDir: string;
const terminals: Terminal[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-contingency-service-');
  const rt = [
    '--cnpj',
    '12ABC34501DE35',
    '--contato',
    'Suporte Fiscal',
    '--email',
    'fiscal@balcao.dev',
    '--telefone',
    '1133334444',
    '--csrt-id',
    '1',
    '--csrt',
    CSRT,
  ];
  const set = await runCli(['responsavel-tecnico', 'definir', '--data', serviceDir, ...rt]);
  expect(set.code, set.stderr).toBe(0);
  service = await startService({ dataDir: serviceDir });
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await service?.stop();
});

async function setup(authorityTimeoutMs?: number, options: Partial<Parameters<typeof testTerminal>[0]> = {}) {
  const company = await storeCompanyWithCertificate(serviceDir);
  const printer = new MemoryPrinter();
  const terminal = await testTerminal({ serviceUrl: service.url, token: company.token, series: 1, printerTransport: printer, authorityTimeoutMs, ...options });
  terminals.push(terminal);
  await eventually('responsável técnico recebido do serviço', () => terminal.settings.technicalResponsible);
  const manager = await terminal.createManager({ name: 'Gerente Ana', pin: '2580' });
  const auth = { managerId: manager.id, pin: '2580' };
  await setUpContingency(terminal, company, auth, { failureThreshold: 3 });
  // A printer without native QR: the symbol is printed as a raster image, which is read back here.
  await terminal.updateSettings({ printer: { kind: 'virtual', address: null, profile: 'bematech-mp4200-escpos', paperWidth: 80 } }, auth);
  return { terminal, company, printer, auth, http: api(service.url, company.token) };
}

/** The n-th sale, ready to finish: one to three products, cash (with change) or a card on a machine. */
async function sellable(terminal: Terminal, n: number) {
  const codes = ['1001', '1002', '1003', '1004', '1005', '1007', '1008'];
  let sale = await terminal.openSale();
  for (let i = 0; i <= n % 3; i++) sale = await terminal.addItem(sale.id, { code: codes[(n + i * 2) % codes.length]!, quantity: String(1 + ((n + i) % 2)) });
  return terminal.addPayment(
    sale.id,
    n % 4 === 0
      ? { tPag: '03', amountCents: sale.totalCents, card: { tpIntegra: '2', tBand: '01' } }
      : { tPag: '01', amountCents: Math.ceil(sale.totalCents / 1000) * 1000 },
  );
}

/** The n-th sale (see sellable), finished. */
async function sell(terminal: Terminal, n: number): Promise<ReceiptView> {
  return (await terminal.finishSale((await sellable(terminal, n)).id)).receipt;
}

type Printed = { chave: string; digest: string; qrcode: string };

/**
 * Every print job read back: two per receipt, "Via Consumidor" then "Via Estabelecimento", both
 * marked as contingency, QR read from the raster; the XML's signature valid and the company's.
 */
async function checkPrinted(
  terminal: Terminal,
  printer: MemoryPrinter,
  from: number,
  receipts: ReceiptView[],
  certificatePem: string,
): Promise<Map<string, Printed>> {
  await terminal.contingency.printsSettled();
  const jobs = printer.jobs.slice(from);
  const byKey = new Map<string, { copies: string[] }>();
  for (const job of jobs) {
    const t = decodeEscPos(job);
    const text = t.lines.map((l) => l.text).join('\n');
    expect(text).toContain('EMITIDA EM CONTINGÊNCIA');
    expect(text).toContain('Pendente de autorização');
    expect(text).not.toContain('Protocolo de Autorização');
    expect(t.images).toHaveLength(1);
    const qr = readQr(imageToRgba(t.images[0]!));
    expect(qr, 'QR Code legível no cupom impresso').toBeTruthy();
    const key = new RegExp(`\\?p=(${ACCESS_KEY_PATTERN})\\|`).exec(qr!.data)![1]!;
    const entry = byKey.get(key) ?? { copies: [] };
    entry.copies.push(text.includes('Via Consumidor') ? 'consumidor' : text.includes('Via Estabelecimento') ? 'estabelecimento' : '?');
    byKey.set(key, entry);
    const row = terminal.store.receipts.allReceipts().find((r) => r.chave === key);
    expect(row, `cupom impresso com a chave ${key}`).toBeDefined();
    expect(qr!.data).toBe(row!.qrcode);
  }
  const printed = new Map<string, Printed>();
  for (const r of receipts) {
    const row = terminal.store.receipts.receipt(r.id)!;
    expect(row).toMatchObject({ tp_emis: 9, state: expect.stringMatching(/^(pending|processing)$/) });
    expect(row.chave![34]).toBe('9');
    expect(byKey.get(row.chave!)?.copies, `vias da NFC-e ${row.nnf}`).toEqual(['consumidor', 'estabelecimento']);
    const verified = verifyXmlSignature(row.signed_xml!);
    expect(verified.valid, `assinatura da NFC-e ${row.nnf}`).toBe(true);
    if (verified.valid) expect(sameCertificate(verified.certificatePem, certificatePem)).toBe(true);
    expect(row.signed_xml).toContain('<tpEmis>9</tpEmis>');
    expect(row.signed_xml).toContain(`<idCSRT>01</idCSRT><hashCSRT>${hashCsrt(CSRT, row.chave!)}</hashCSRT></infRespTec>`);
    expect(row.signed_xml).toMatch(/<dhCont>[^<]+<\/dhCont><xJust>[^<]{15,256}<\/xJust>/);
    printed.set(r.id, { chave: row.chave!, digest: digestValueOf(row.signed_xml!), qrcode: row.qrcode! });
  }
  expect(jobs).toHaveLength(2 * receipts.length);
  return printed;
}

/** After the outage: each receipt authorized at the service with what was printed; nothing twice. */
async function checkTransmitted(terminal: Terminal, http: ReturnType<typeof api>, cnpj: string, printed: Map<string, Printed>): Promise<void> {
  for (const [id, p] of printed) {
    const done = await terminal.waitForReceipt(id, (r) => r.state !== 'pending' && r.state !== 'processing', 30_000);
    expect(done, `NFC-e ${done.nNF}`).toMatchObject({ state: 'authorized', chave: p.chave, contingency: true, codigoStatus: '100' });
    const row = terminal.store.receipts.receipt(id)!;
    const doc = await http.get(`/api/v1/nfce/${row.service_id}`);
    expect(doc.body).toMatchObject({ status: 'autorizado', chave: p.chave, contingencia: true, referencia_externa: row.idempotency_key, qrcode: p.qrcode });
    const xml = await http.get(`/api/v1/nfce/${row.service_id}/xml`);
    expect(xml.text).toContain('<nfeProc');
    expect(digestValueOf(xml.text)).toBe(p.digest);
  }
  const keys = [...printed.values()].map((p) => p.chave);
  const atService = readDb(serviceDir, (db) =>
    db.prepare(`SELECT chave, count(*) AS n FROM nfce_documents WHERE chave IN (${keys.map(() => '?').join(',')}) GROUP BY chave`).all(...keys),
  ) as { chave: string; n: number }[];
  expect(atService).toHaveLength(keys.length);
  expect(atService.filter((d) => d.n !== 1)).toEqual([]);
  const numbers = readDb(
    serviceDir,
    (db) => db.prepare("SELECT number, count(*) AS n FROM nfe WHERE cnpj = ? AND model = '65' GROUP BY serie, number HAVING n > 1").all(cnpj),
    'sandbox-authority.sqlite',
  );
  expect(numbers).toEqual([]);
}

describe('offline contingency at the terminal, against the real service', () => {
  it(
    `service process stopped: enters by itself, ${SALES} sales issued and printed offline, all authorized with the printed keys and digests once it is back`,
    { timeout: 180_000 },
    async () => {
      const { terminal, company, printer, http } = await setup();
      onTestFinished(async () => {
        if (!restarted) await service.restart();
      });
      let restarted = false;
      const online = await sell(terminal, 0);
      expect((await terminal.waitForReceipt(online.id, (r) => r.state === 'authorized', 20_000)).state).toBe('authorized');
      expect((await terminal.contingencyStatus()).active).toBe(false);
      await eventually('cupom da venda online impresso', () => terminal.store.printLog.printJobs(online.id).some((j) => j.state === 'printed'));
      const before = printer.jobs.length;

      await service.stop();
      const status = await eventually('contingência automática', async () => {
        const s = await terminal.contingencyStatus();
        return s.active && s;
      });
      expect(status).toMatchObject({ automatic: true, reason: 'Falha de comunicação com o serviço de emissão de NFC-e', blocked: null, openTasks: [] });
      expect((await terminal.queueStatus()).contingency.active).toBe(true);

      const receipts: ReceiptView[] = [];
      for (let n = 1; n <= SALES; n++) {
        const r = await sell(terminal, n);
        expect(r).toMatchObject({ contingency: true, state: 'pending', nNF: n + 1, canCorrect: false, canVoid: false });
        receipts.push(r);
      }
      const during = await terminal.contingencyStatus();
      expect(during).toMatchObject({ active: true, pending: SALES });
      expect(Date.parse(during.nextDeadline!)).toBe(Date.parse(receipts[0]!.createdAt) + 24 * 3_600_000);
      const printed = await checkPrinted(terminal, printer, before, receipts, company.certificate.certificatePem);

      await service.restart();
      restarted = true;
      await checkTransmitted(terminal, http, company.cnpj, printed);
      const after = await eventually('saída automática da contingência', async () => {
        const s = await terminal.contingencyStatus();
        return !s.active && s.pending === 0 && s;
      });
      expect(after).toMatchObject({ warning: null, blocked: null, openTasks: [] });
      // Authorized afterwards: nothing printed again (the consumer has the contingency DANFE).
      await terminal.contingency.printsSettled();
      expect(printer.jobs).toHaveLength(before + 2 * SALES);
      expect(
        terminal
          .auditLog()
          .map((a) => a.action)
          .filter((a) => a.startsWith('contingencia')),
      ).toEqual(['contingencia_inicio', 'contingencia_fim']);
    },
  );

  it(
    `authority unavailable: the stalled sale is re-issued offline, ${SALES} more sales offline, all authorized once it is back, the stalled one cancelled by substitution`,
    { timeout: 180_000 },
    async () => {
      // The service is warm by now: an authorization takes milliseconds, so one second of silence is telling.
      const { terminal, company, printer, http } = await setup(1_000);
      expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(200);
      const stalled = await sell(terminal, 0);
      const status = await eventually('contingência pela SEFAZ sem resposta', async () => {
        const s = await terminal.contingencyStatus();
        return s.active && s;
      });
      expect(status).toMatchObject({ automatic: true, reason: 'SEFAZ sem resposta às autorizações de NFC-e' });
      // The stalled sale now has a contingency receipt (number 2); number 1 waits for its fate.
      expect(await terminal.getReceipt(stalled.id)).toMatchObject({ contingency: true, nNF: 2, state: expect.stringMatching(/pending|processing/) });
      expect(status.openTasks).toEqual([
        expect.objectContaining({ receiptId: stalled.id, kind: 'inutilizar', description: expect.stringContaining('NFC-e nº 1 (série 1)') }),
      ]);

      const receipts: ReceiptView[] = [await terminal.getReceipt(stalled.id)];
      for (let n = 1; n <= SALES; n++) receipts.push(await sell(terminal, n));
      expect(receipts.map((r) => r.nNF)).toEqual(Array.from({ length: SALES + 1 }, (_, i) => i + 2));
      const printed = await checkPrinted(terminal, printer, 0, receipts, company.certificate.certificatePem);
      // The service keeps answering meanwhile: the receipts go out, and wait there for the authority.
      await eventually('NFC-e de contingência recebidas pelo serviço', () =>
        receipts.every((r) => terminal.store.receipts.receipt(r.id)!.state === 'processing'),
      );
      expect((await terminal.contingencyStatus()).active).toBe(true);

      expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);
      await checkTransmitted(terminal, http, company.cnpj, printed);
      const after = await eventually('contingência encerrada e reconciliada', async () => {
        const s = await terminal.contingencyStatus();
        return !s.active && s.openTasks.length === 0 && s.pending === 0 && s;
      });
      expect(after.warning).toBeNull();
      const [task] = terminal.store.contingency.reconciliationTasks();
      expect(task).toMatchObject({ nnf: 1, state: 'done', outcome: 'cancelada_substituicao' });
      const original = await http.get(`/api/v1/nfce/${task!.service_id}`);
      expect(original.body).toMatchObject({ status: 'cancelado', numero: 1, contingencia: false });
      await terminal.contingency.printsSettled();
      expect(printer.jobs).toHaveLength(2 * (SALES + 1));
    },
  );

  /** The service learns its authority is down from another till's sale. */
  async function serviceLearnsAuthorityIsDown(http: ReturnType<typeof api>): Promise<void> {
    expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(200);
    const other = await http.post('/api/v1/nfce', nfceBody(1, {}, 9));
    expect(other.status).toBe(202);
    await eventually('o serviço sabe da SEFAZ fora do ar', async () => (await http.get('/healthz')).body.autoridade?.situacao === 'indisponivel');
  }

  /** Nothing of this terminal's series reached the service online. */
  const onlineAtService = (companyId: string) =>
    readDb(serviceDir, (db) => db.prepare('SELECT count(*) FROM nfce_documents WHERE company_id = ? AND serie = 1 AND tp_emis = 1').pluck().get(companyId));

  it(
    'the service says the authority is down: an idle terminal enters contingency at once, its next sale is issued offline, never online; it leaves once the service says the authority answers',
    { timeout: 180_000 },
    async () => {
      const { terminal, company, printer, http } = await setup();
      await serviceLearnsAuthorityIsDown(http);
      // The terminal's next health check carries the news: no sale had to wait for it.
      const status = await eventually('contingência pela palavra do serviço', async () => {
        const s = await terminal.contingencyStatus();
        return s.active && s;
      });
      expect(status).toMatchObject({ automatic: true, reason: 'SEFAZ sem resposta às autorizações de NFC-e' });

      const { receipt } = await terminal.finishSale((await sellable(terminal, 1)).id);
      expect(receipt).toMatchObject({ contingency: true, nNF: 1 });
      await terminal.contingency.printsSettled();
      expect(printer.jobs).toHaveLength(2);
      expect(onlineAtService(company.companyId)).toBe(0);

      expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);
      expect((await terminal.waitForReceipt(receipt.id, (r) => r.state === 'authorized', 30_000)).state).toBe('authorized');
      await eventually('contingência encerrada', async () => !(await terminal.contingencyStatus()).active);
      expect(terminal.store.contingency.reconciliationTasks()).toEqual([]);
    },
  );

  it(
    'a sale finished before the terminal heard the news: the service is asked before it is first sent, and it is issued offline with its own number, never sent online',
    { timeout: 180_000 },
    async () => {
      // Health checks far apart, and the news always asked for before a first send.
      const { terminal, company, http } = await setup(undefined, { healthIntervalMs: 600_000, authorityNewsMaxAgeMs: 0 });
      await eventually('o terminal falou com o serviço', async () => (await terminal.queueStatus()).online === true);
      await serviceLearnsAuthorityIsDown(http);
      expect((await terminal.contingencyStatus()).active).toBe(false);

      const { receipt: sold } = await terminal.finishSale((await sellable(terminal, 1)).id);
      expect(sold).toMatchObject({ contingency: false, nNF: 1 });
      const receipt = await eventually('emitida em contingência', async () => {
        const r = await terminal.getReceipt(sold.id);
        return r.contingency && r;
      });
      // It certainly never left: the offline receipt keeps number 1, nothing to void or cancel.
      expect(receipt).toMatchObject({ nNF: 1, serie: 1 });
      expect(terminal.store.contingency.reconciliationTasks()).toEqual([]);
      expect(onlineAtService(company.companyId)).toBe(0);
    },
  );

  it('a cash sale issued offline opens the drawer once: with the first copy, not with the second nor a reprint', { timeout: 180_000 }, async () => {
    const { terminal, printer, auth } = await setup();
    await terminal.enterContingency({ ...auth, justification: 'Teste da gaveta em contingência' });
    const receipt = await sell(terminal, 1); // cash
    await terminal.contingency.printsSettled();
    const pulses = (job: Uint8Array) => decodeEscPos(job).commands.filter((c) => c.op === 'pulse').length;
    expect(printer.jobs.map(pulses)).toEqual([1, 0]);
    await terminal.reprint(receipt.id, { ...auth, reason: 'Cliente pediu outra via' });
    expect(printer.jobs.map(pulses)).toEqual([1, 0, 0]);
  });

  it(
    'a contingency receipt the service refuses (signed with another certificate) waits for a person with the reason; it cannot be corrected',
    { timeout: 180_000 },
    async () => {
      const company = await storeCompanyWithCertificate(serviceDir);
      const other = generateTestCertificate({ cnpj: company.cnpj, xNome: 'OUTRO CERTIFICADO', password: company.password });
      const terminal = await testTerminal({ serviceUrl: service.url, token: company.token, series: 1, printerTransport: new MemoryPrinter() });
      terminals.push(terminal);
      const manager = await terminal.createManager({ name: 'Gerente Ana', pin: '2580' });
      const auth = { managerId: manager.id, pin: '2580' };
      await setUpContingency(terminal, { ...company, pfx: other.pfx }, auth);
      const events: string[] = [];
      terminal.subscribe((e) => {
        if (e.type === 'contingency') events.push(e.status.active ? 'ativa' : 'inativa');
      });
      await terminal.enterContingency({ ...auth, justification: 'Teste de contingência com certificado trocado' });
      const receipt = await sell(terminal, 1);
      const refused = await terminal.waitForReceipt(receipt.id, (r) => r.state === 'needs_attention', 20_000);
      expect(refused).toMatchObject({ contingency: true, canCorrect: false, canVoid: false, attention: expect.stringMatching(/certificado/) });
      const status = await terminal.contingencyStatus();
      expect(status.openTasks).toEqual([
        expect.objectContaining({
          kind: 'transmitir',
          receiptId: receipt.id,
          description: expect.stringMatching(/^NFC-e de contingência nº 1 \(série 1\) não foi aceita: .*certificado/),
        }),
      ]);
      expect(status.pending).toBe(1);
      await expect(terminal.correctAndResubmit(receipt.id, {}, { ...auth, reason: 'tentar de novo' })).rejects.toMatchObject({ code: 'estado_invalido' });
      expect(events[0]).toBe('ativa');
    },
  );

  it(
    "a contingency receipt refused for the terminal's wrong token goes through once the manager fixes the token and resumes it",
    { timeout: 180_000 },
    async () => {
      const company = await storeCompanyWithCertificate(serviceDir);
      const another = await storeCompanyWithCertificate(serviceDir);
      // The terminal holds the store's company and certificate, but another company's token.
      const terminal = await testTerminal({ serviceUrl: service.url, token: another.token, series: 1, printerTransport: new MemoryPrinter() });
      terminals.push(terminal);
      const manager = await terminal.createManager({ name: 'Gerente Ana', pin: '2580' });
      const auth = { managerId: manager.id, pin: '2580' };
      await setUpContingency(terminal, company, auth);
      await terminal.enterContingency({ ...auth, justification: 'Teste de contingência com o token de outra empresa' });
      const receipt = await sell(terminal, 1);
      const refused = await terminal.waitForReceipt(receipt.id, (r) => r.state === 'needs_attention', 20_000);
      expect(refused.attention).toMatch(/não é esta empresa/);
      const [task] = (await terminal.contingencyStatus()).openTasks;
      expect(task).toMatchObject({ kind: 'transmitir', receiptId: receipt.id, canResume: true });

      await terminal.updateSettings({ token: company.token }, auth);
      await terminal.resumeContingencyTask(task!.id, auth);
      const authorized = await terminal.waitForReceipt(receipt.id, (r) => r.state === 'authorized', 20_000);
      // The very receipt that was printed: same key, under the same idempotency key.
      expect(authorized.chave).toBe(receipt.chave);
      expect((await terminal.contingencyStatus()).openTasks).toEqual([]);
      const atService = await api(service.url, company.token).get(`/api/v1/nfce/${terminal.store.receipts.receipt(receipt.id)!.service_id}`);
      expect(atService.body).toMatchObject({ status: 'autorizado', chave: receipt.chave, contingencia: true });
      expect(terminal.store.outbox.outboxOf(receipt.id).map((e) => e.idempotency_key)).toEqual([terminal.store.receipts.receipt(receipt.id)!.idempotency_key]);
    },
  );
});
