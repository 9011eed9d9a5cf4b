// What the checkout app needs from the terminal core, against the real `balcao service` process
// over real HTTP: an authorized sale printed exactly once (virtual printer folder), also across
// a restart; a printer out of paper never loses the sale, the cashier prints it once fixed and
// a further copy is the manager's reprint; the preview
// of the receipt; settings that round-trip without ever returning the secrets, refused with a
// wrong PIN; the certificate import; the catalog CSV import.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { DEMO_CSC, demoEmitter } from '../fiscal/samples.ts';
import type { TerminalEvent } from '../electron/api/terminal-api.ts';
import { profileOfEmitter } from '../electron/core/company-profile.ts';
import { VIRTUAL_PRINTER_DIR } from '../electron/core/printing.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { decodeEscPos } from './escpos-decoder.ts';
import { startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { eventually, storeCompany, testTerminal } from './terminal-fixtures.ts';

let service: ServiceProcess;
let serviceDir: string;
const terminals: Terminal[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-app-features-');
  service = await startService({ dataDir: serviceDir });
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await service?.stop();
});

async function open(options: Parameters<typeof testTerminal>[0]): Promise<Terminal> {
  const terminal = await testTerminal(options);
  terminals.push(terminal);
  return terminal;
}

async function sellAndAuthorize(terminal: Terminal) {
  let sale = await terminal.openSale();
  sale = await terminal.addItem(sale.id, { code: '1001', quantity: '2' });
  sale = await terminal.addItem(sale.id, { code: '1003' });
  sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: 10_000 });
  const { receipt } = await terminal.finishSale(sale.id);
  const done = await terminal.waitForReceipt(receipt.id, (r) => r.state !== 'pending' && r.state !== 'processing', 30_000);
  expect(done.state).toBe('authorized');
  return done;
}

const jobsIn = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.bin'))
        .sort()
    : [];
/** "3525 1011 …": the key as printed, in groups of four. */
const keyGroups = (chave: string) => chave.match(/.{4}/g)!;

describe('printing an authorized receipt', () => {
  it('prints it once on the virtual printer, with the key and the QR Code, and never again after a restart', async () => {
    const company = await storeCompany(serviceDir);
    const dataDir = tempDataDir('balcao-app-print-');
    const options = { dataDir, serviceUrl: service.url, token: company.token, series: 1 };
    let terminal = await open(options);
    const events: TerminalEvent[] = [];
    terminal.subscribe((e) => events.push(e));
    const receipt = await sellAndAuthorize(terminal);

    const folder = join(dataDir, VIRTUAL_PRINTER_DIR);
    // The job's number is claimed by its .bin; its .png preview is written right after it.
    await eventually(
      'o cupom impresso, com a imagem',
      () => jobsIn(folder).length === 1 && existsSync(join(folder, jobsIn(folder)[0]!.replace('.bin', '.png'))),
    );
    const [job] = jobsIn(folder);
    const printed = decodeEscPos(readFileSync(join(folder, job!)));
    expect(printed.qrCodes.map((q) => q.payload)).toEqual([receipt.qrcode]);
    const text = printed.lines.map((l) => l.text).join('\n');
    for (const group of keyGroups(receipt.chave!)) expect(text).toContain(group);
    // The job is recorded as printed once the printer has taken every byte, after its files are
    // on disk: on a loaded machine a moment later, so it is waited for, not assumed.
    const status = await eventually('a impressão registrada', async () => {
      const now = await terminal.printerStatus();
      return now.lastPrintAt !== null && now;
    });
    expect(await terminal.recentPrints()).toEqual([expect.objectContaining({ kind: 'nfce', receiptId: receipt.id, copy: 'unica' })]);
    expect(status).toMatchObject({ ready: true, name: 'Impressora virtual', problem: null });
    expect(status.lastPrintAt).not.toBeNull();
    expect(events.some((e) => e.type === 'printer' && e.status.ready)).toBe(true);

    // The preview comes from the XML kept after the first fetch: no service needed.
    terminal.client.reconfigure({ baseUrl: 'http://127.0.0.1:9' });
    const preview = await terminal.receiptPreview(receipt.id);
    expect(preview.svg).toMatch(/^<svg /);
    expect(preview.svg).toContain(keyGroups(receipt.chave!).slice(0, 3).join(' '));
    expect(preview.lines).toContain(keyGroups(receipt.chave!).join(' '));
    terminal.client.reconfigure({ baseUrl: service.url });

    // Restart on the same folder: the first receipt is not printed again, a new one is.
    await terminal.close();
    terminal = await open(options);
    const second = await sellAndAuthorize(terminal);
    await eventually('o segundo cupom', () => jobsIn(folder).length === 2);
    await eventually('o segundo cupom registrado', () => terminal.store.printLog.printJobs(second.id).some((j) => j.state === 'printed'));
    await new Promise((r) => setTimeout(r, 300)); // room for a (wrong) extra job to show up
    expect(jobsIn(folder)).toHaveLength(2);
    expect(terminal.store.printLog.printJobs(receipt.id)).toHaveLength(1);
    expect(terminal.store.printLog.printJobs(second.id)).toEqual([expect.objectContaining({ state: 'printed', automatic: 1 })]);
  });

  it("out of paper: the receipt stays authorized, the status says so, the cashier prints it once fixed, and a further copy is the manager's", async () => {
    const company = await storeCompany(serviceDir);
    const printer = new MemoryPrinter({ failWith: 'sem_papel' });
    const terminal = await open({ serviceUrl: service.url, token: company.token, series: 1, printerTransport: printer });
    const manager = await terminal.createManager({ name: 'Gerente Bia', pin: '1357' });
    const events: TerminalEvent[] = [];
    terminal.subscribe((e) => events.push(e));
    const receipt = await sellAndAuthorize(terminal);

    const status = await eventually('a impressora sem papel', async () => {
      const s = await terminal.printerStatus();
      return !s.ready && s;
    });
    expect(status.problem).toMatch(/sem papel/i);
    expect(events).toContainEqual({ type: 'printer', status: expect.objectContaining({ ready: false }) });
    expect((await terminal.getReceipt(receipt.id)).state).toBe('authorized');
    expect(terminal.store.printLog.printJobs(receipt.id)).toEqual([expect.objectContaining({ state: 'failed', automatic: 1 })]);

    // The consumer never got the copy: the cashier prints it, no PIN needed, once there is paper.
    await expect(terminal.printReceipt(receipt.id)).rejects.toMatchObject({ code: 'impressora', message: expect.stringMatching(/sem papel/i) });
    expect(printer.jobs).toHaveLength(0);
    printer.failWith = undefined;
    const printed = await terminal.printReceipt(receipt.id);
    expect(printer.jobs).toHaveLength(1);
    expect(Buffer.from(printer.jobs[0]!).toString('base64')).toBe(printed.escposBase64);
    expect(decodeEscPos(printer.jobs[0]!).qrCodes.map((q) => q.payload)).toEqual([receipt.qrcode]);
    expect(await terminal.printerStatus()).toMatchObject({ ready: true, problem: null });

    // Once it came out, another copy is a reprint: the manager's, with the reason, audited.
    await expect(terminal.printReceipt(receipt.id)).rejects.toMatchObject({ code: 'estado_invalido', message: expect.stringMatching(/gerente/) });
    expect(printer.jobs).toHaveLength(1);
    const again = await terminal.reprint(receipt.id, { managerId: manager.id, pin: '1357', reason: 'Cliente pediu segunda via' });
    expect(printer.jobs).toHaveLength(2);
    expect(Buffer.from(printer.jobs[1]!).toString('base64')).toBe(again.escposBase64);
    expect(terminal.auditLog(receipt.id).map((a) => [a.actor_name, a.action, JSON.parse(a.details!).impresso])).toEqual([['Gerente Bia', 'reimpressao', true]]);
    expect(await terminal.recentPrints()).toEqual([
      expect.objectContaining({ kind: 'nfce', receiptId: receipt.id, copy: 'reimpressao' }),
      expect.objectContaining({ kind: 'nfce', receiptId: receipt.id, copy: 'unica' }),
    ]);
  });
});

describe('settings, company profile and certificate', () => {
  it('round-trips the settings, applies them live, never returns nor audits the secrets, and refuses a wrong PIN', async () => {
    const company = await storeCompany(serviceDir);
    const terminal = await open({ serviceUrl: service.url, token: company.token, series: 1, printerTransport: new MemoryPrinter() });
    const manager = await terminal.createManager({ name: 'Gerente Bia', pin: '4321' });
    const auth = { managerId: manager.id, pin: '4321' };
    const before = await terminal.getSettings();
    expect(before).toMatchObject({ serviceUrl: service.url, tokenSet: true, series: 1, company: null, certificate: null });
    expect(before.contingency).toEqual({ failureThreshold: 3, maxReceipts: 500, maxHours: 24, series: null });

    const profile = profileOfEmitter(demoEmitter({ cnpj: company.cnpj }));
    const patch = {
      series: 7,
      token: company.token,
      printer: { kind: 'virtual' as const, address: null, profile: 'elgin-i9' as const, paperWidth: 58 as const },
      company: { ...profile, cscToken: DEMO_CSC.token },
      contingency: { maxReceipts: 100 },
    };
    await expect(terminal.updateSettings(patch, { ...auth, pin: '9999' })).rejects.toMatchObject({ code: 'pin_invalido', field: 'pin' });
    expect((await terminal.getSettings()).series).toBe(1);

    await expect(terminal.updateSettings({ company: { ...profile, address: { ...profile.address, CEP: '20040002' } } }, auth)).rejects.toMatchObject({
      code: 'configuracao_invalida',
      field: 'company.address.CEP',
      message: expect.stringContaining('CEP'),
    });

    const after = await terminal.updateSettings(patch, auth);
    expect(after).toMatchObject({
      series: 7,
      tokenSet: true,
      printer: patch.printer,
      company: { ...profile, cscSet: true },
      contingency: { failureThreshold: 3, maxReceipts: 100, maxHours: 24, series: null },
    });
    expect(await terminal.getSettings()).toEqual(after);
    for (const secret of [company.token, DEMO_CSC.token]) {
      expect(JSON.stringify(after)).not.toContain(secret);
      expect(JSON.stringify(terminal.auditLog())).not.toContain(secret);
    }
    // (The till the fixture opened comes first.)
    expect(terminal.auditLog().map((a) => a.action)).toEqual(['caixa_aberto', 'pin_recusado', 'configuracoes_alteradas']);

    // Live: the next receipt takes series 7, and the printer got the 58 mm profile.
    const receipt = await sellAndAuthorize(terminal);
    expect(receipt).toMatchObject({ serie: 7, nNF: 1 });
    const preview = await terminal.receiptPreview(receipt.id);
    expect(preview.svg).toMatch(/width="432"/); // 32 columns × 12 dots + margins
  });

  it('imports the certificate of the company only: wrong password, another CNPJ and no company are refused', async () => {
    const company = await storeCompany(serviceDir);
    const terminal = await open({ serviceUrl: service.url, token: company.token, series: 1, printerTransport: new MemoryPrinter() });
    const manager = await terminal.createManager({ name: 'Gerente Caio', pin: '1357' });
    const auth = { managerId: manager.id, pin: '1357' };
    const cert = generateTestCertificate({ cnpj: company.cnpj, xNome: 'LOJA TERMINAL' });
    const pfxBase64 = cert.pfx.toString('base64');

    await expect(terminal.importCertificate({ ...auth, pfxBase64, password: cert.password })).rejects.toMatchObject({
      code: 'configuracao_invalida',
      field: 'company',
    });
    expect(terminal.settings.credentials()).toEqual({ reason: expect.stringMatching(/empresa/) });
    await terminal.updateSettings({ company: { ...profileOfEmitter(demoEmitter({ cnpj: company.cnpj })), cscToken: DEMO_CSC.token } }, auth);
    expect(terminal.settings.contingencyCredentials()).toBeNull();
    expect(terminal.settings.credentials()).toEqual({ reason: expect.stringMatching(/[Cc]ertificado/) });

    await expect(terminal.importCertificate({ ...auth, pfxBase64, password: 'errada' })).rejects.toMatchObject({
      code: 'certificado_invalido',
      field: 'password',
      message: expect.stringMatching(/senha/i),
    });
    const other = generateTestCertificate({ cnpj: demoEmitter().cnpj, xNome: 'OUTRA LOJA' });
    await expect(terminal.importCertificate({ ...auth, pfxBase64: other.pfx.toString('base64'), password: other.password })).rejects.toMatchObject({
      code: 'certificado_invalido',
      message: expect.stringContaining(company.cnpj),
    });
    expect((await terminal.getSettings()).certificate).toBeNull();

    const view = await terminal.importCertificate({ ...auth, pfxBase64, password: cert.password });
    expect(view).toEqual({ subject: cert.certificate.subject, cnpj: company.cnpj, notAfter: cert.certificate.notAfter.toISOString() });
    expect((await terminal.getSettings()).certificate).toEqual(view);
    const credentials = terminal.settings.contingencyCredentials();
    expect(credentials?.emitter).toMatchObject({ cnpj: company.cnpj, csc: DEMO_CSC });
    expect(credentials?.certificate.fingerprint256).toBe(cert.certificate.fingerprint256);
    expect(JSON.stringify(terminal.auditLog())).not.toContain(cert.password);
  });
});

describe('catalog import', () => {
  it('imports the good rows and reports the bad ones by line, code and column', async () => {
    const company = await storeCompany(serviceDir);
    const terminal = await open({ serviceUrl: service.url, token: company.token, series: 1, printerTransport: new MemoryPrinter() });
    const manager = await terminal.createManager({ name: 'Gerente Duda', pin: '8642' });
    const csv = [
      '\uFEFFcodigo;gtin;descricao;ncm;cfop;unidade;preco;grupo_tributario',
      '2001;;Pão de queijo 1kg;19059090;5102;KG;32,90;SN102',
      '1001;7891000100103;Café torrado e moído 500g;09012100;5102;UN;19.50;SN102',
      '2002;;Sem preço;19059090;5102;UN;abc;SN102',
    ].join('\r\n');
    const report = await terminal.importCatalogCsv(csv, { managerId: manager.id, pin: '8642' });
    expect(report).toEqual({ imported: 1, updated: 1, rejected: [{ line: 4, code: '2002', field: 'preco', message: expect.stringContaining('Preço') }] });
    expect(await terminal.findProducts('2001')).toEqual([expect.objectContaining({ description: 'Pão de queijo 1kg', priceCents: 3290, gtin: 'SEM GTIN' })]);
    expect((await terminal.findProducts('1001'))[0]?.priceCents).toBe(1950);
  });
});
