// Reconciliation of the sales caught by an outage, end to end against the real service: the
// online attempt of a sale had no known outcome when contingency began, the sale was issued
// again offline with a new number (tpEmis 9), and once the service is back the first attempt is
//   - cancelled by substitution (event 110112 naming the contingency key) when it turns out
//     authorized: learned from the service by its id, or, when no answer ever came back, from
//     the inutilização the authority refuses (241) and then the replay of its own key;
//   - voided (inutilização) when it never was.
// Nothing is issued twice: the authority's own file holds each number once, authorized,
// cancelled or voided.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Terminal } from '../electron/core/terminal.ts';
import { readDb } from './helpers/nfce.ts';
import { api, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { eventually, setUpContingency, storeCompanyWithCertificate, testTerminal } from './terminal-fixtures.ts';

let service: ServiceProcess;
let serviceDir: string;
const terminals: Terminal[] = [];
const servers: Server[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-reconciliation-service-');
  service = await startService({ dataDir: serviceDir });
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  for (const s of servers) await new Promise((r) => s.close(r));
  await service?.stop();
});

/**
 * An HTTP proxy in front of the service that, while `swallowing`, lets every request reach the
 * service and be answered in full there, then cuts the connection instead of passing the answer
 * on: the terminal never learns what happened. Requests matching `cut` do not even get through.
 */
async function lossyProxy(target: () => string): Promise<{ url: string; swallowing: boolean; swallowed: string[]; passed: string[]; cut: RegExp | null }> {
  const state = { url: '', swallowing: false, swallowed: [] as string[], passed: [] as string[], cut: null as RegExp | null };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.swallowing && state.cut?.test(`${req.method} ${req.url}`)) {
        req.socket.destroy();
        return;
      }
      void (async () => {
        const headers: Record<string, string> = {};
        for (const h of ['authorization', 'content-type', 'accept', 'idempotency-key']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h];
        let upstream: Response;
        try {
          upstream = await fetch(target() + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
        } catch {
          req.socket.destroy();
          return;
        }
        const body = Buffer.from(await upstream.arrayBuffer());
        if (state.swallowing) {
          state.swallowed.push(`${req.method} ${req.url} → ${upstream.status}`);
          req.socket.destroy();
          return;
        }
        state.passed.push(`${req.method} ${req.url} → ${upstream.status}`);
        const out: Record<string, string> = { 'content-length': String(body.length) };
        for (const h of ['content-type', 'retry-after', 'idempotent-replayed']) {
          const v = upstream.headers.get(h);
          if (v !== null) out[h] = v;
        }
        res.writeHead(upstream.status, out).end(body);
      })();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return state;
}

async function setup(options: { serviceUrl?: string; authorityTimeoutMs?: number } = {}) {
  const company = await storeCompanyWithCertificate(serviceDir);
  const terminal = await testTerminal({
    serviceUrl: options.serviceUrl ?? service.url,
    token: company.token,
    series: 1,
    authorityTimeoutMs: options.authorityTimeoutMs,
    requestTimeoutMs: 3_000,
  });
  terminals.push(terminal);
  const manager = await terminal.createManager({ name: 'Gerente Ana', pin: '2580' });
  await setUpContingency(terminal, company, { managerId: manager.id, pin: '2580' }, { failureThreshold: 3 });
  return { terminal, company, http: api(service.url, company.token) };
}

async function sell(terminal: Terminal) {
  let sale = await terminal.openSale();
  sale = await terminal.addItem(sale.id, { code: '1001', quantity: '2' });
  sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: 5000 });
  return (await terminal.finishSale(sale.id)).receipt;
}

// Contingency turns active before the in-doubt attempt is superseded (the outbox worker's next
// pass): each test here waits for both, or under load it reads the status in between, with no task.
const active = (terminal: Terminal) =>
  eventually('contingência ativa, com a primeira tentativa substituída', async () => {
    const s = await terminal.contingencyStatus();
    return s.active && s.openTasks.length > 0 && s;
  });

const reconciled = (terminal: Terminal) =>
  eventually('contingência encerrada e reconciliada', async () => {
    const s = await terminal.contingencyStatus();
    return !s.active && s.pending === 0 && s.openTasks.length === 0 && s;
  });

/** The authority's record of this company's numbers: each at most once, and how it ended. */
function authorityNumbers(cnpj: string) {
  return readDb(
    serviceDir,
    (db) => ({
      nfe: db.prepare("SELECT number, tp_emis, cancelled_at IS NOT NULL AS cancelled FROM nfe WHERE cnpj = ? AND model = '65' ORDER BY number").all(cnpj),
      events: db.prepare('SELECT e.tp_evento, n.number FROM nfe_event e JOIN nfe n ON n.access_key = e.access_key WHERE n.cnpj = ?').all(cnpj),
      voided: db.prepare("SELECT first_number, last_number FROM voided_range WHERE cnpj = ? AND model = '65'").all(cnpj),
    }),
    'sandbox-authority.sqlite',
  );
}

describe('reconciling the sale caught by the outage', () => {
  it(
    'the first attempt turns out authorized (the service had it processando): cancelled by substitution, event 110112 naming the contingency key',
    { timeout: 180_000 },
    async () => {
      const { terminal, company, http } = await setup({ authorityTimeoutMs: 1_000 });
      expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(200);
      const receipt = await sell(terminal);
      expect(receipt).toMatchObject({ nNF: 1, contingency: false });
      await eventually('aceita pelo serviço', () => terminal.store.receipts.receipt(receipt.id)!.service_id);
      const firstAttempt = terminal.store.receipts.receipt(receipt.id)!;
      await active(terminal);

      const reissued = await terminal.getReceipt(receipt.id);
      expect(reissued).toMatchObject({ nNF: 2, contingency: true });
      expect(reissued.chave).not.toBe(firstAttempt.chave);
      const [task] = terminal.store.contingency.reconciliationTasks();
      expect(task).toMatchObject({
        nnf: 1,
        serie: 1,
        service_id: firstAttempt.service_id,
        idempotency_key: firstAttempt.idempotency_key,
        kind: 'verificar',
        state: 'open',
      });
      expect(terminal.store.outbox.outboxOf(receipt.id).map((e) => [e.state, e.payload.startsWith('{"xml"')])).toEqual([
        ['failed', false],
        [expect.stringMatching(/pending|sent/), true],
      ]);

      expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);
      await reconciled(terminal);
      expect(terminal.store.contingency.reconciliationTasks()).toEqual([
        expect.objectContaining({ state: 'done', outcome: 'cancelada_substituicao', kind: 'cancelar_substituicao' }),
      ]);
      expect(await terminal.getReceipt(receipt.id)).toMatchObject({ state: 'authorized', nNF: 2, contingency: true });

      const original = await http.get(`/api/v1/nfce/${firstAttempt.service_id}`);
      expect(original.body).toMatchObject({ status: 'cancelado', numero: 1, chave: firstAttempt.chave, contingencia: false });
      const event = readDb(serviceDir, (db) => db.prepare('SELECT evento_xml FROM nfce_documents WHERE id = ?').pluck().get(firstAttempt.service_id)) as string;
      expect(event).toContain('<tpEvento>110112</tpEvento>');
      expect(event).toContain(`<chNFeRef>${reissued.chave}</chNFeRef>`);
      expect(authorityNumbers(company.cnpj)).toEqual({
        nfe: [
          { number: 1, tp_emis: 1, cancelled: 1 },
          { number: 2, tp_emis: 9, cancelled: 0 },
        ],
        events: [{ tp_evento: '110112', number: 1 }],
        voided: [],
      });
      expect(terminal.auditLog(receipt.id).map((a) => a.action)).toEqual(['contingencia_reemissao', 'reconciliacao_cancelamento_substituicao']);
    },
  );

  it('the first attempt never reached the authority (the service was down): its number is voided at the service', { timeout: 180_000 }, async () => {
    const { terminal, company, http } = await setup();
    await service.stop();
    let restarted = false;
    try {
      const receipt = await sell(terminal);
      const status = await active(terminal);
      expect(status.openTasks).toEqual([expect.objectContaining({ receiptId: receipt.id, kind: 'inutilizar' })]);
      expect(await terminal.getReceipt(receipt.id)).toMatchObject({ nNF: 2, contingency: true, state: 'pending' });
      await service.restart();
      restarted = true;
    } finally {
      if (!restarted) await service.restart();
    }
    await reconciled(terminal);
    const [task] = terminal.store.contingency.reconciliationTasks();
    expect(task).toMatchObject({ nnf: 1, state: 'done', outcome: 'inutilizada', kind: 'inutilizar', service_id: null });
    expect(task!.protocolo).toMatch(/^[0-9]{15}$/);
    const voided = readDb(serviceDir, (db) =>
      db.prepare('SELECT serie, numero_inicial, numero_final, codigo_status FROM nfce_inutilizacoes WHERE company_id = ?').all(company.companyId),
    );
    expect(voided).toEqual([{ serie: 1, numero_inicial: 1, numero_final: 1, codigo_status: '102' }]);
    expect(authorityNumbers(company.cnpj)).toEqual({
      nfe: [{ number: 2, tp_emis: 9, cancelled: 0 }],
      events: [],
      voided: [{ first_number: 1, last_number: 1 }],
    });
    // Asked again, the service replays the voiding; the terminal's numbering went on.
    const again = await http.post('/api/v1/nfce/inutilizar', {
      serie: 1,
      numero_inicial: 1,
      numero_final: 1,
      justificativa: 'Número não utilizado: repetição do teste',
    });
    expect(again.body).toMatchObject({ codigo_status: '102', protocolo: task!.protocolo });
    expect(terminal.store.receipts.allReceipts().map((r) => [r.nnf, r.tp_emis, r.state])).toEqual([[2, 9, 'authorized']]);
  });

  it(
    'every answer lost while the first attempt was authorized: the refused voiding (241) and the replay of its key lead to the substitution',
    { timeout: 180_000 },
    async () => {
      const proxy = await lossyProxy(() => service.url);
      const { terminal, company, http } = await setup({ serviceUrl: proxy.url });
      proxy.swallowing = true;
      // The voiding must not overtake the authorization of the first attempt at the service.
      proxy.cut = /^POST \/api\/v1\/nfce\/inutilizar/;
      const receipt = await sell(terminal);
      await active(terminal);
      const firstKey = terminal.store.contingency.reconciliationTasks()[0]!.idempotency_key;
      expect(terminal.store.contingency.reconciliationTasks()).toEqual([expect.objectContaining({ nnf: 1, service_id: null, kind: 'verificar' })]);
      // The service got it and authorized it; the terminal never heard.
      expect(proxy.swallowed.some((s) => s.startsWith('POST /api/v1/nfce → 202'))).toBe(true);
      await eventually('autorizada no serviço sem o terminal saber', () =>
        readDb(serviceDir, (db) => db.prepare("SELECT status FROM nfce_documents WHERE idempotency_key = ? AND status = 'autorizado'").get(firstKey)),
      );

      proxy.swallowing = false;
      await reconciled(terminal);
      const [task] = terminal.store.contingency.reconciliationTasks();
      expect(task).toMatchObject({ nnf: 1, state: 'done', outcome: 'cancelada_substituicao' });
      expect(task!.service_id).toBeTruthy();
      // The way it learned: the voiding refused (241: the number is used), then the replay of the key.
      const steps = proxy.passed.filter((p) => /inutilizar|cancelar|POST \/api\/v1\/nfce →/.test(p));
      expect(steps.slice(steps.indexOf('POST /api/v1/nfce/inutilizar → 422'))).toEqual(
        expect.arrayContaining(['POST /api/v1/nfce/inutilizar → 422', 'POST /api/v1/nfce → 200', `POST /api/v1/nfce/${task!.service_id}/cancelar → 200`]),
      );
      const reissued = await terminal.getReceipt(receipt.id);
      expect(reissued).toMatchObject({ state: 'authorized', nNF: 2, contingency: true });
      expect((await http.get(`/api/v1/nfce/${task!.service_id}`)).body).toMatchObject({ status: 'cancelado', numero: 1, referencia_externa: firstKey });
      expect(authorityNumbers(company.cnpj)).toEqual({
        nfe: [
          { number: 1, tp_emis: 1, cancelled: 1 },
          { number: 2, tp_emis: 9, cancelled: 0 },
        ],
        events: [{ tp_evento: '110112', number: 1 }],
        voided: [],
      });
      // One document per key at the service: the replay issued nothing new.
      const docs = readDb(serviceDir, (db) =>
        db.prepare('SELECT numero, count(*) AS n FROM nfce_documents WHERE company_id = ? GROUP BY numero ORDER BY numero').all(company.companyId),
      );
      expect(docs).toEqual([
        { numero: 1, n: 1 },
        { numero: 2, n: 1 },
      ]);
    },
  );
});
