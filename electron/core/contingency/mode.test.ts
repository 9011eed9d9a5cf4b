// The contingency state machine, in two parts: the failure counts alone (pure), then the mode
// in a real terminal (real SQLite file, real certificate, the service unreachable on a closed
// port): entering by a manager or by itself, the in-doubt sale issued again in the same
// transaction, the limits, leaving.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../../../fiscal/certificate.ts';
import { demoEmitter } from '../../../fiscal/samples.ts';
import type { CompanyProfile } from '../../api/terminal-api.ts';
import type { Failure } from '../failures.ts';
import { createTerminal, type Terminal } from '../terminal.ts';
import { AUTOMATIC_REASONS, FailureDetector } from './mode.ts';

const net: Failure = { kind: 'network', failure: 'refused', message: 'recusada' };
const http = (status: number, code = 'x'): Failure => ({ kind: 'http', status, code, message: code, details: [] });

describe('FailureDetector', () => {
  it('enters after `threshold` consecutive service failures; any answer below 500 starts the count again', () => {
    const d = new FailureDetector(0, 1000);
    d.exchange(net);
    d.exchange(http(503));
    expect(d.verdict(3, undefined, false)).toBeUndefined();
    d.exchange(http(422));
    d.exchange(net);
    d.exchange(net);
    expect(d.verdict(3, undefined, false)).toBeUndefined();
    d.exchange(net);
    expect(d.verdict(3, undefined, false)).toEqual({ enter: 'servico' });
  });

  it('the authority: a receipt processing past the timeout with no verdict meanwhile counts, the 202s and polls in between do not hide it', () => {
    const d = new FailureDetector(0, 1000);
    d.receipt('a', 'processing', 100);
    d.exchange(null); // the service answers all along
    d.receipt('a', 'processing', 900);
    expect(d.counts.authority).toBe(0);
    for (const t of [1200, 1300, 1400]) {
      d.exchange(null);
      d.receipt('a', 'processing', t);
    }
    expect(d.verdict(3, undefined, false)).toEqual({ enter: 'autoridade' });
  });

  it('a long queue the authority is working through is not an outage: verdicts keep coming', () => {
    const d = new FailureDetector(0, 1000);
    d.receipt('old', 'processing', 0);
    for (let t = 1500; t < 5000; t += 100) {
      d.receipt(`r${t}`, 'processing', t - 100);
      d.receipt(`r${t}`, 'authorized', t);
      d.receipt('old', 'processing', t);
    }
    expect(d.counts.authority).toBe(0);
  });

  it('503 autoridade_indisponivel counts for the authority, not the service', () => {
    const d = new FailureDetector(0, 1000);
    for (let i = 0; i < 3; i++) d.exchange(http(503, 'autoridade_indisponivel'));
    expect(d.counts).toEqual({ service: 0, authority: 3 });
    expect(d.verdict(3, undefined, false)).toEqual({ enter: 'autoridade' });
  });

  it('leaving: an automatic period ends on a verdict, or on an answer when it began for the service (or nothing awaits a verdict); a manager’s never', () => {
    const service = { automatic: true, cause: 'servico' as const };
    const authority = { automatic: true, cause: 'autoridade' as const };
    const d = new FailureDetector(0, 1000);
    d.reset(0);
    expect(d.verdict(3, service, true)).toBeUndefined();
    d.exchange(net);
    expect(d.verdict(3, service, true)).toBeUndefined();
    d.exchange(null);
    expect(d.verdict(3, service, true)).toEqual({ leave: true });
    expect(d.verdict(3, authority, true)).toBeUndefined();
    expect(d.verdict(3, authority, false)).toEqual({ leave: true });
    expect(d.verdict(3, { automatic: false, cause: 'servico' }, false)).toBeUndefined();
    d.receipt('x', 'processing', 10);
    d.receipt('x', 'authorized', 20);
    expect(d.verdict(3, authority, true)).toEqual({ leave: true });
  });

  it('a period begun on the service’s word that the authority is down ends on the first verdict after it: the authority answered', () => {
    const authority = { automatic: true, cause: 'autoridade' as const };
    const d = new FailureDetector(0, 1000);
    d.authority('indisponivel');
    expect(d.verdict(3, undefined, false)).toEqual({ enter: 'autoridade' });
    d.reset(0, true); // entered: the service's word outlives entering
    d.exchange(null); // the contingency receipts go out: the service answers, the authority not yet
    d.receipt('c1', 'processing', 10);
    d.receipt('c2', 'processing', 10);
    expect(d.verdict(3, authority, true)).toBeUndefined();
    // The authority is back: the first contingency receipt is authorized. What the service said
    // before is old news now; its next word on the authority is heard as ever.
    d.receipt('c1', 'authorized', 20);
    expect(d.verdict(3, authority, true)).toEqual({ leave: true });
    d.authority('indisponivel');
    expect(d.verdict(3, authority, true)).toBeUndefined();
  });
});

// =============================================================================================

let dir: string | undefined;
let terminal: Terminal | undefined;
let deadUrl: string;
let pfx: Buffer;
const PASSWORD = 'senha-do-certificado';
const CNPJ = '11222333000181';

beforeAll(async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  deadUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  await new Promise((resolve) => server.close(resolve));
  pfx = generateTestCertificate({ cnpj: CNPJ, xNome: 'MERCADO TESTE', password: PASSWORD }).pfx;
});

afterEach(async () => {
  await terminal?.close();
  terminal = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const demo = demoEmitter({ cnpj: CNPJ });
const profile: CompanyProfile & { cscToken: string } = {
  cnpj: CNPJ,
  ie: demo.ie,
  xNome: 'MERCADO TESTE',
  address: { ...demo.address },
  crt: 1,
  environment: 'homologacao',
  qrCodeVersion: 2,
  cscId: '1',
  cscToken: 'CSC-DE-TESTE-123456',
};

type OpenOptions = { startWorker?: boolean; credentials?: boolean; clock?: () => number; contingency?: Record<string, unknown> };

/** The terminal on `dataDir`, its till open (no sale finishes without one). */
async function startTerminal(dataDir: string, options: OpenOptions): Promise<Terminal> {
  const t = await createTerminal({
    dataDir,
    serviceUrl: deadUrl,
    token: 'blc_teste',
    series: 3,
    retry: { baseMs: 20, capMs: 100 },
    healthIntervalMs: 30,
    startWorker: options.startWorker ?? false,
    ...(options.clock && { clock: options.clock }),
  });
  if (!(await t.cashSession())) await t.openCashSession({ floatCents: 0, operator: 'Caixa de teste' });
  return t;
}

async function open(options: OpenOptions = {}) {
  dir = mkdtempSync(join(tmpdir(), 'balcao-contingency-'));
  const t = await startTerminal(dir, options);
  terminal = t;
  t.seedDemoCatalog();
  const manager = await t.createManager({ name: 'Gerente Bia', pin: '1234' });
  const auth = { managerId: manager.id, pin: '1234' };
  // A contingency series is claimed at the service before a manager's change is saved
  // (series-registry.ts), and the service is down here: the test sets it as the local process.
  const { series, ...limits } = (options.contingency ?? {}) as { series?: number };
  if (series !== undefined) t.configure({ contingency: { series } }, 'teste: série da contingência');
  if (options.credentials !== false) {
    await t.updateSettings({ company: profile, contingency: limits }, auth);
    await t.importCertificate({ ...auth, pfxBase64: pfx.toString('base64'), password: PASSWORD });
  } else if (options.contingency) {
    await t.updateSettings({ contingency: limits }, auth);
  }
  return { t, auth };
}

/**
 * The terminal started again on the same data: a sale finished before is in doubt now (an
 * earlier process may have sent it before it stopped), unlike one this process never sent.
 */
async function restarted(options: OpenOptions = {}): Promise<Terminal> {
  await terminal?.close();
  const t = await startTerminal(dir!, options);
  terminal = t;
  return t;
}

async function sale(t: Terminal): Promise<string> {
  let s = await t.openSale();
  s = await t.addItem(s.id, { code: '1002', quantity: '3' });
  s = await t.addPayment(s.id, { tPag: '01', amountCents: 2000 });
  return s.id;
}

const JUSTIFICATION = 'Link de internet da loja fora do ar desde a abertura';

describe('entering and leaving, in a terminal', () => {
  it('a manager enters with a justification; the sale in doubt is issued again offline with a new number, in one transaction', async () => {
    const { t: first, auth } = await open();
    const before = first.finishSaleNow(await sale(first)).receipt; // online, not sent (worker stopped)
    const t = await restarted(); // ...by this process: in doubt now
    expect(before).toMatchObject({ nNF: 1, contingency: false, state: 'pending' });
    const oldKey = t.store.receipts.receipt(before.id)!.idempotency_key;

    await expect(t.enterContingency({ ...auth, justification: 'curta' })).rejects.toMatchObject({ code: 'justificativa_invalida', field: 'justification' });
    await expect(t.enterContingency({ ...auth, pin: '9999', justification: JUSTIFICATION })).rejects.toMatchObject({ code: 'pin_invalido' });
    expect((await t.contingencyStatus()).active).toBe(false);

    const events: boolean[] = [];
    t.subscribe((e) => e.type === 'contingency' && events.push(e.status.active));
    const status = await t.enterContingency({ ...auth, justification: JUSTIFICATION });
    expect(events).toEqual([true]);
    expect(status).toMatchObject({ active: true, automatic: false, reason: JUSTIFICATION, pending: 1, blocked: null });
    expect(status.openTasks).toEqual([expect.objectContaining({ receiptId: before.id, kind: 'inutilizar' })]);
    const row = t.store.receipts.receipt(before.id)!;
    expect(row).toMatchObject({ nnf: 2, serie: 3, tp_emis: 9, state: 'pending', service_id: null });
    expect(row.idempotency_key).not.toBe(oldKey);
    expect(row.signed_xml).toContain(`<dhCont>`);
    expect(row.signed_xml).toContain(`<xJust>${JUSTIFICATION}</xJust>`);
    expect(t.store.contingency.reconciliationTasks()).toEqual([
      expect.objectContaining({ serie: 3, nnf: 1, idempotency_key: oldKey, kind: 'verificar', state: 'open' }),
    ]);
    expect(t.store.outbox.outboxOf(before.id).map((e) => [e.state, e.idempotency_key === oldKey, JSON.parse(e.payload).xml === row.signed_xml])).toEqual([
      ['failed', true, false],
      ['pending', false, true],
    ]);

    // Sales now are issued here, with the period's dhCont and xJust.
    const offline = t.finishSaleNow(await sale(t)).receipt;
    expect(offline).toMatchObject({ nNF: 3, contingency: true, state: 'pending', canCorrect: false, canVoid: false });
    await expect(t.enterContingency({ ...auth, justification: JUSTIFICATION })).rejects.toMatchObject({ code: 'estado_invalido' });
    // Waiting for authorization, it can be printed again (a jammed printer must not leave the store without its copy).
    const again = await t.reprint(offline.id, { ...auth, reason: 'Papel enroscou na impressora' });
    expect(Buffer.from(again.escposBase64, 'base64').toString('latin1')).toContain('EMITIDA EM CONTING');

    const left = await t.leaveContingency(auth);
    expect(left).toMatchObject({ active: false, pending: 2 });
    expect(t.finishSaleNow(await sale(t)).receipt).toMatchObject({ nNF: 4, contingency: false });
    await expect(t.leaveContingency(auth)).rejects.toMatchObject({ code: 'estado_invalido' });
    expect(t.auditLog().map((a) => [a.actor_kind, a.action])).toEqual(
      expect.arrayContaining([
        ['manager', 'pin_recusado'],
        ['system', 'contingencia_reemissao'],
        ['manager', 'contingencia_inicio'],
        ['manager', 'contingencia_fim'],
      ]),
    );
  });

  it('without the company and certificate: the manager is told before the PIN; the terminal does not enter by itself, and says why', async () => {
    const { t, auth } = await open({ credentials: false, contingency: { failureThreshold: 2 } });
    const heard: (string | null)[] = [];
    t.subscribe((e) => e.type === 'contingency' && heard.push(e.status.warning));
    t.worker.start();
    await expect(t.enterContingency({ ...auth, pin: '0000', justification: JUSTIFICATION })).rejects.toMatchObject({
      code: 'configuracao_invalida',
      message: expect.stringMatching(/Dados da empresa/),
    });
    expect(t.auditLog().filter((a) => a.action === 'pin_recusado')).toEqual([]);
    const status = await waitFor(t, (s) => s.warning !== null);
    const cannot = /^Serviço de emissão fora do ar, e a contingência offline não pode começar: Dados da empresa/;
    expect(status).toMatchObject({ active: false, warning: expect.stringMatching(cannot), warnings: [expect.stringMatching(cannot)] });
    // Told to the screen as it happens: no other change of the status would carry it there.
    expect(heard.some((w) => w !== null && cannot.test(w))).toBe(true);
    expect(t.finishSaleNow(await sale(t)).receipt.contingency).toBe(false);

    // A manager opens a period once the company is set up (the failures stopped being counted
    // meanwhile): the reason one could not begin is gone with it.
    await t.worker.stop();
    expect((await t.contingencyStatus()).warnings).toEqual([expect.stringMatching(cannot)]);
    await t.updateSettings({ company: profile }, auth);
    await t.importCertificate({ ...auth, pfxBase64: pfx.toString('base64'), password: PASSWORD });
    const entered = await t.enterContingency({ ...auth, justification: JUSTIFICATION });
    expect(entered).toMatchObject({ active: true, warning: null, warnings: [] });
  });

  it('by itself after the configured number of failures, then it issues every sale offline', async () => {
    const { t } = await open({ startWorker: true, contingency: { failureThreshold: 2 } });
    const status = await waitFor(t, (s) => s.active);
    expect(status).toMatchObject({ automatic: true, reason: AUTOMATIC_REASONS.servico });
    expect(t.finishSaleNow(await sale(t)).receipt).toMatchObject({ contingency: true, nNF: 1 });
  });

  it('the limits: past maxReceipts or maxHours, finishing is refused with contingencia_limite and nothing is written', async () => {
    let offset = 0;
    const { t, auth } = await open({ clock: () => Date.now() + offset, contingency: { maxReceipts: 2, maxHours: 3 } });
    await t.enterContingency({ ...auth, justification: JUSTIFICATION });
    t.finishSaleNow(await sale(t));
    t.finishSaleNow(await sale(t));
    const third = await sale(t);
    expect(() => t.finishSaleNow(third)).toThrow(expect.objectContaining({ code: 'contingencia_limite', message: expect.stringMatching(/Limite de 2 NFC-e/) }));
    expect((await t.getSale(third)).state).toBe('open');
    expect(t.store.series.nextNumber(3)).toBe(3);
    expect((await t.contingencyStatus()).blocked).toMatch(/Limite de 2/);

    await t.updateSettings({ contingency: { maxReceipts: 100 } }, auth);
    expect((await t.contingencyStatus()).blocked).toBeNull();
    offset = 3 * 3_600_000;
    expect(() => t.finishSaleNow(third)).toThrow(expect.objectContaining({ code: 'contingencia_limite', message: expect.stringMatching(/mais de 3 horas/) }));
    // 22 hours in, the oldest receipt's 24-hour deadline is near: the status says so, next to
    // the limit that blocks selling, each warning on its own.
    offset = 22.5 * 3_600_000;
    const deadline = /^Transmita as 2 NFC-e emitidas em contingência: o prazo de 24 horas da mais antiga vence em 1 h (2\d|30) min/;
    const near = await t.contingencyStatus();
    expect(near.warning).toMatch(/Transmita as 2 NFC-e emitidas em contingência: o prazo de 24 horas da mais antiga vence em 1 h (2\d|30) min/);
    expect(near.warnings).toEqual([near.blocked, expect.stringMatching(deadline)]);
    expect(near.blocked).toMatch(/mais de 3 horas/);

    // The period ends with both still waiting: nothing blocks selling, but the deadline stands.
    const left = await t.leaveContingency(auth);
    expect(left).toMatchObject({ active: false, blocked: null, pending: 2, warnings: [expect.stringMatching(deadline)] });
    offset = 24.5 * 3_600_000;
    expect((await t.contingencyStatus()).warnings).toEqual([
      expect.stringMatching(/^O prazo de 24 horas para transmitir as 2 NFC-e emitidas em contingência venceu em /),
    ]);
  });

  it('a separate contingency series numbers its own sequence', async () => {
    const { t, auth } = await open({ contingency: { series: 890 } });
    expect(t.finishSaleNow(await sale(t)).receipt).toMatchObject({ serie: 3, nNF: 1 });
    await t.enterContingency({ ...auth, justification: JUSTIFICATION });
    // The online receipt in doubt and the next sale: 890/1 and 890/2.
    expect(t.store.receipts.allReceipts().map((r) => [r.serie, r.nnf, r.tp_emis])).toEqual([[890, 1, 9]]);
    expect(t.finishSaleNow(await sale(t)).receipt).toMatchObject({ serie: 890, nNF: 2, contingency: true });
    await t.leaveContingency(auth);
    expect(t.finishSaleNow(await sale(t)).receipt).toMatchObject({ serie: 3, nNF: 2, contingency: false });
  });
});

describe('a sale this process never sent', () => {
  it('is issued offline with its own number when contingency begins: nothing to reconcile', async () => {
    const { t, auth } = await open();
    const before = t.finishSaleNow(await sale(t)).receipt; // online, never handed to the service
    const status = await t.enterContingency({ ...auth, justification: JUSTIFICATION });
    expect(status).toMatchObject({ active: true, pending: 1, openTasks: [] });
    expect(t.store.receipts.receipt(before.id)).toMatchObject({ nnf: 1, serie: 3, tp_emis: 9, state: 'pending' });
    expect(t.store.contingency.reconciliationTasks()).toEqual([]);
    expect(t.auditLog(before.id).map((a) => a.reason)).toContain(
      'NFC-e ainda não enviada quando a contingência começou: emitida em contingência com o mesmo número',
    );
  });
});

describe('resuming a stalled task (manager)', () => {
  it('a reconciliation task the service refused goes back to the queue, with its keys, behind the PIN', async () => {
    const { t: first, auth } = await open();
    first.finishSaleNow(await sale(first));
    const t = await restarted(); // in doubt when the period starts: a reconciliation task
    await t.enterContingency({ ...auth, justification: JUSTIFICATION });
    const [task] = t.store.contingency.reconciliationTasks();
    // An open task is the terminal's own business: nothing to resume.
    expect((await t.contingencyStatus()).openTasks).toEqual([expect.objectContaining({ id: task!.id, canResume: false })]);
    await expect(t.resumeContingencyTask(task!.id, auth)).rejects.toMatchObject({ code: 'estado_invalido', field: 'taskId' });

    // As Reconciler.block leaves it after a refusal.
    t.store.contingency.updateReconciliationTask(
      task!.id,
      { state: 'blocked', attempts: 3, last_error: 'Inutilização recusada pelo serviço: série desconhecida' },
      new Date().toISOString(),
    );
    const stalled = (await t.contingencyStatus()).openTasks[0]!;
    expect(stalled).toMatchObject({ id: task!.id, canResume: true, description: expect.stringMatching(/Requer atenção: Inutilização recusada/) });
    await expect(t.resumeContingencyTask(task!.id, { ...auth, pin: '0000' })).rejects.toMatchObject({ code: 'pin_invalido' });
    expect(t.store.contingency.reconciliationTask(task!.id)!.state).toBe('blocked');

    const status = await t.resumeContingencyTask(task!.id, auth);
    expect(status.openTasks).toEqual([expect.objectContaining({ id: task!.id, canResume: false })]);
    const resumed = t.store.contingency.reconciliationTask(task!.id)!;
    expect(resumed).toMatchObject({ state: 'open', attempts: 0, last_error: null, void_key: task!.void_key, cancel_key: task!.cancel_key });
    expect(resumed.next_attempt_at).toBeLessThanOrEqual(Date.now());
    expect(t.auditLog().filter((a) => a.action === 'pendencia_retomada')).toEqual([
      expect.objectContaining({ actor_kind: 'manager', receipt_id: task!.receipt_id, details: JSON.stringify({ pendencia: task!.id }) }),
    ]);
    await expect(t.resumeContingencyTask('nao-existe', auth)).rejects.toMatchObject({ code: 'nao_encontrado', field: 'taskId' });
  });

  it('a contingency receipt the service refused is sent again under its key; one the authority rejected cannot be', async () => {
    const { t, auth } = await open();
    await t.enterContingency({ ...auth, justification: JUSTIFICATION });
    const receipt = t.finishSaleNow(await sale(t)).receipt;
    const [entry] = t.store.outbox.outboxOf(receipt.id);
    const at = new Date().toISOString();
    // As the outbox worker leaves them: refused by the service (needs_attention), entry blocked.
    t.store.receipts.updateReceipt(receipt.id, { state: 'needs_attention', attention: 'O serviço recusou a NFC-e: o emitente não é esta empresa' }, at);
    t.store.outbox.updateOutbox(entry!.seq, { state: 'blocked', attempts: 1, last_error: 'recusada' }, at);
    const task = (await t.contingencyStatus()).openTasks.find((x) => x.receiptId === receipt.id)!;
    expect(task).toMatchObject({ kind: 'transmitir', canResume: true });

    await t.resumeContingencyTask(task.id, auth);
    expect(t.store.receipts.receipt(receipt.id)).toMatchObject({ state: 'pending', attention: null });
    expect(t.store.outbox.outboxOf(receipt.id)).toEqual([
      expect.objectContaining({ seq: entry!.seq, state: 'pending', attempts: 0, idempotency_key: entry!.idempotency_key, payload: entry!.payload }),
    ]);
    expect((await t.contingencyStatus()).openTasks.some((x) => x.receiptId === receipt.id)).toBe(false);

    // Rejected by the authority: signed and printed as it is, it is not sent again.
    t.store.receipts.updateReceipt(receipt.id, { state: 'rejected', codigo_status: '539', attention: 'rejeitada' }, at);
    t.store.outbox.updateOutbox(entry!.seq, { state: 'blocked', last_error: 'rejeitada' }, at);
    expect((await t.contingencyStatus()).openTasks.find((x) => x.receiptId === receipt.id)).toMatchObject({ canResume: false });
    await expect(t.resumeContingencyTask(task.id, auth)).rejects.toMatchObject({
      code: 'estado_invalido',
      message: expect.stringMatching(/rejeitada pela SEFAZ e não pode ser reenviada/),
    });
    expect(t.store.outbox.outboxEntry(entry!.seq)!.state).toBe('blocked');
  });
});

async function waitFor(t: Terminal, done: (s: Awaited<ReturnType<Terminal['contingencyStatus']>>) => boolean, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await t.contingencyStatus();
    if (done(s)) return s;
    if (Date.now() > until) throw new Error(`tempo esgotado: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
