// Chaos: the terminal core runs as its own process (`balcao terminal vendas`, 200 sales) and is
// SIGKILLed at random moments, over and over, then started again on the same data folder; the
// real service is killed (SIGKILL) and restarted once, at a random moment, under it. In the end:
// - every finished sale has one receipt and one outbox entry, none lost, the numbers 1..200 with
//   no gap and no repeat, and every receipt authorized;
// - every sale the process announced as finished is in the database (durable before announced);
// - at the service, each receipt is the document its key names, authorized with that number;
//   at the (sandbox) authority, each number is authorized exactly once.
// The random choices come from a seed printed with any failure, so a failing run can be replayed
// with BALCAO_CHAOS_SEED.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { POS_DB_FILE } from '../electron/core/db.ts';
import { createTerminal } from '../electron/core/terminal.ts';
import { digestValueOf } from '../fiscal/signature.ts';
import { api, repoRoot, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { eventually, setUpContingency, storeCompany, storeCompanyWithCertificate } from './terminal-fixtures.ts';

const SALES = 200;
/**
 * Each test bounds a hang, not a pace: idle, both take under a minute together; on a 2-core
 * machine with both cores taken by another load, each spawns dozens of terminal processes that
 * start several times slower, and 240 s was seen not to be enough. Speed is the benches' business.
 */
const HANG_BOUND_MS = 900_000;
/** Lives of the terminal process that end in a SIGKILL (unless it finished first). */
const KILLED_LIVES = 10;

let service: ServiceProcess;
let serviceDir: string;

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-terminal-chaos-');
  service = await startService({ dataDir: serviceDir });
});

afterAll(async () => {
  await service?.stop();
});

/** mulberry32: small, seedable, good enough to pick kill moments. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Life = { child: ChildProcess; ready: Promise<void>; drained: Promise<boolean>; exited: Promise<number | null> };

function startTerminal(dataDir: string, token: string, finished: Map<number, string>, log: string[], quantity = SALES): Life {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, 'bin', 'balcao.js'),
      'terminal',
      'vendas',
      '--data',
      dataDir,
      '--servico',
      service.url,
      '--token',
      token,
      '--serie',
      '1',
      '--quantidade',
      String(quantity),
      '--intervalo-ms',
      '5',
      '--espera-base-ms',
      '50',
      '--espera-max-ms',
      '400',
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let onReady: () => void;
  let onDrained: (v: boolean) => void;
  const ready = new Promise<void>((r) => (onReady = r));
  const drained = new Promise<boolean>((r) => (onDrained = r));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    log.push(line);
    const event = JSON.parse(line) as { event: string; nNF?: number; receiptId?: string };
    if (event.event === 'ready') onReady();
    if (event.event === 'finished') {
      // The same number announced twice with different receipts would be a reissued number.
      expect(finished.get(event.nNF!) ?? event.receiptId).toBe(event.receiptId);
      finished.set(event.nNF!, event.receiptId!);
    }
    if (event.event === 'drained') onDrained(true);
  });
  createInterface({ input: child.stderr! }).on('line', (line) => log.push(`stderr: ${line}`));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      onReady();
      onDrained(false);
      resolve(code);
    }),
  );
  return { child, ready, drained, exited };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it(
  `${SALES} sales, the terminal SIGKILLed at random and the service restarted once: each sale authorized exactly once, numbers contiguous, nothing lost`,
  { timeout: HANG_BOUND_MS },
  async () => {
    const seed = Number(process.env.BALCAO_CHAOS_SEED ?? Date.now() % 1_000_000);
    const random = rng(seed);
    const context = `semente ${seed} (BALCAO_CHAOS_SEED=${seed} repete esta execução)`;
    const company = await storeCompany(serviceDir);
    const dataDir = tempDataDir('balcao-terminal-chaos-pos-');
    const announced = new Map<number, string>();
    const log: string[] = [];
    const serviceRestartLife = 1 + Math.floor(random() * 4);
    let kills = 0;
    const killedAt: number[] = [];
    let serviceRestarted = false;

    for (let life = 1; ; life++) {
      expect(life, `processo do terminal não terminou em 60 vidas; ${context}`).toBeLessThan(60);
      const current = startTerminal(dataDir, company.token, announced, log);
      await current.ready;
      let serviceRestart: Promise<void> | undefined;
      if (life === serviceRestartLife) {
        serviceRestart = (async () => {
          await sleep(50 + random() * 600);
          await service.restart({ hard: true });
          serviceRestarted = true;
        })();
      }
      if (life <= KILLED_LIVES) {
        const outcome = await Promise.race([current.drained.then((d) => (d ? 'drained' : 'exited')), sleep(50 + random() * 900).then(() => 'kill')]);
        if (outcome === 'kill') {
          current.child.kill('SIGKILL');
          await current.exited;
          kills++;
          killedAt.push(announced.size);
          await serviceRestart;
          continue;
        }
      }
      const drained = await current.drained;
      const code = await current.exited;
      await serviceRestart;
      expect({ drained, code }, `${context}\n${log.slice(-30).join('\n')}`).toEqual({ drained: true, code: 0 });
      break;
    }
    expect(serviceRestarted, context).toBe(true);
    expect(kills, context).toBeGreaterThan(0);

    // ---- The terminal's own record
    const db = new Database(join(dataDir, POS_DB_FILE), { readonly: true, fileMustExist: true });
    let receipts: { id: string; sale_id: string; nnf: number; state: string; idempotency_key: string; service_id: string; request_json: string }[];
    try {
      const sales = db.prepare("SELECT id FROM sales WHERE state = 'finished'").pluck().all() as string[];
      expect(sales.length, context).toBe(SALES);
      receipts = db.prepare('SELECT * FROM receipts ORDER BY nnf').all() as typeof receipts;
      expect(
        receipts.map((r) => r.nnf),
        context,
      ).toEqual(Array.from({ length: SALES }, (_, i) => i + 1));
      expect(new Set(receipts.map((r) => r.sale_id)), context).toEqual(new Set(sales));
      expect(
        receipts.filter((r) => r.state !== 'authorized').map((r) => [r.nnf, r.state]),
        context,
      ).toEqual([]);
      expect(db.prepare('SELECT next_nnf FROM series WHERE serie = 1').pluck().get(), context).toBe(SALES + 1);
      const outbox = db.prepare('SELECT receipt_id, kind, state, idempotency_key FROM outbox ORDER BY seq').all() as {
        receipt_id: string;
        kind: string;
        state: string;
        idempotency_key: string;
      }[];
      expect(outbox.length, context).toBe(SALES);
      expect(
        outbox.filter((e) => e.kind !== 'emit' || e.state !== 'done'),
        context,
      ).toEqual([]);
      const keyOf = new Map(receipts.map((r) => [r.id, r.idempotency_key]));
      for (const e of outbox) expect(e.idempotency_key).toBe(keyOf.get(e.receipt_id));
      // Announced on stdout only after the commit: every announced sale is there.
      expect(announced.size, context).toBeGreaterThan(0);
      const idOf = new Map(receipts.map((r) => [r.nnf, r.id]));
      for (const [n, id] of announced) expect(idOf.get(n), `${context} nNF ${n}`).toBe(id);
    } finally {
      db.close();
    }

    // ---- The service: each key names one authorized document with our number
    const http = api(service.url, company.token);
    for (const r of receipts) {
      const doc = await http.get(`/api/v1/nfce/${r.service_id}`);
      expect(doc.body, `${context} nNF ${r.nnf}`).toMatchObject({ status: 'autorizado', numero: r.nnf, serie: 1, referencia_externa: r.idempotency_key });
    }
    for (const r of receipts.filter((_, i) => i % 20 === 0)) {
      const again = await http.post('/api/v1/nfce', JSON.parse(r.request_json), { headers: { 'idempotency-key': r.idempotency_key } });
      expect(again.status, context).toBe(200);
      expect(again.body, context).toMatchObject({ id: r.service_id, idempotent_replay: true });
    }

    // ---- The authority: each number authorized exactly once
    const authority = new Database(join(serviceDir, 'sandbox-authority.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const rows = authority
        .prepare("SELECT number, count(*) AS n FROM nfe WHERE cnpj = ? AND model = '65' AND serie = 1 GROUP BY number ORDER BY number")
        .all(company.cnpj) as { number: number; n: number }[];
      expect(rows, context).toEqual(Array.from({ length: SALES }, (_, i) => ({ number: i + 1, n: 1 })));
    } finally {
      authority.close();
    }
    console.log(
      `caos: ${kills} SIGKILL do terminal (vendas anunciadas a cada morte: ${killedAt.join(', ')}), ` +
        `serviço reiniciado na vida ${serviceRestartLife}; ${context}`,
    );
  },
);

// ---- Offline contingency under SIGKILL ---------------------------------------------------------
// A focused phase: the terminal set up to issue by itself (company, CSC, certificate), the
// service killed, `balcao terminal vendas` selling OUTAGE_SALES sales and SIGKILLed at random
// while it issues them offline; then the service back and the process SIGKILLed a few more
// times while it transmits them and reconciles the sales caught by the outage. In the end every
// sale has one receipt, issued offline and authorized at the service with the key and digest it
// was signed with; every number the terminal took is either such a receipt or voided (the
// online attempts the outage left in doubt), none both, none twice.
//
// A catch-up life is killed only once it has moved the catch-up on (the service accepted one
// more receipt, or one more was authorized), a random moment later. For the first one the
// sandbox authority answers after CATCH_UP_LATENCY_MS: a receipt the service has just accepted
// is authorized no sooner than that, so that kill certainly lands with receipts transmitted and
// others still waiting, however fast the terminal drains. The latency is then lifted, so the
// other lives go at full speed and may drain before their kill.

const OUTAGE_SALES = 40;
const OUTAGE_KILLS = 6;
const CATCH_UP_KILLS = 3;
const CATCH_UP_LATENCY_MS = 1_000;

type CatchUp = { accepted: number; authorized: number; voided: number; waiting: number };

/** How far the catch-up is, from the terminal's database (read while the process writes it). */
function catchUpOf(db: Database.Database): CatchUp {
  return db
    .prepare(
      `SELECT
         (SELECT count(service_id) FROM receipts WHERE tp_emis = 9) AS accepted,
         (SELECT count(*) FROM receipts WHERE tp_emis = 9 AND state = 'authorized') AS authorized,
         (SELECT count(*) FROM reconciliation_tasks WHERE state = 'done') AS voided,
         (SELECT count(*) FROM receipts WHERE state != 'authorized') AS waiting`,
    )
    .get() as CatchUp;
}

const moved = (c: CatchUp): number => c.accepted + c.authorized + c.voided;

/** Resolves once the catch-up moved past `from`, or undefined once `stop` settles first. */
async function catchUpMoved(dataDir: string, from: CatchUp, stop: Promise<unknown>): Promise<CatchUp | undefined> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  const db = new Database(join(dataDir, POS_DB_FILE), { readonly: true, fileMustExist: true });
  try {
    for (;;) {
      if (stopped) return undefined;
      const now = catchUpOf(db);
      if (moved(now) > moved(from)) return now;
      await sleep(10);
    }
  } finally {
    db.close();
  }
}

function catchUpNow(dataDir: string): CatchUp {
  const db = new Database(join(dataDir, POS_DB_FILE), { readonly: true, fileMustExist: true });
  try {
    return catchUpOf(db);
  } finally {
    db.close();
  }
}

function finishedSales(dataDir: string): number {
  const db = new Database(join(dataDir, POS_DB_FILE), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT count(*) FROM sales WHERE state = 'finished'").pluck().get() as number;
  } finally {
    db.close();
  }
}

it(
  `offline contingency: ${OUTAGE_SALES} sales while the service is down, the terminal SIGKILLed during the outage and during the catch-up: each sale issued offline once, transmitted once, in-doubt numbers voided`,
  { timeout: HANG_BOUND_MS },
  async () => {
    const seed = Number(process.env.BALCAO_CHAOS_SEED ?? Date.now() % 1_000_000);
    const random = rng(seed + 1);
    const context = `semente ${seed} (BALCAO_CHAOS_SEED=${seed} repete esta execução)`;
    const company = await storeCompanyWithCertificate(serviceDir);
    const dataDir = tempDataDir('balcao-terminal-chaos-contingency-');
    const setup = await createTerminal({ dataDir, serviceUrl: service.url, token: company.token, series: 1, startWorker: false });
    const manager = await setup.createManager({ name: 'Gerente Ana', pin: '2580' });
    await setUpContingency(setup, company, { managerId: manager.id, pin: '2580' }, { failureThreshold: 2 });
    await setup.close();

    const announced = new Map<number, string>();
    const log: string[] = [];
    let kills = 0;
    await service.kill();
    let serviceBack = false;
    try {
      // The outage: lives killed at random moments, then one that sells what is left (it cannot
      // drain while the service is away: it is killed too once every sale is finished).
      for (let life = 1; life <= OUTAGE_KILLS + 1; life++) {
        const current = startTerminal(dataDir, company.token, announced, log, OUTAGE_SALES);
        await current.ready;
        if (life <= OUTAGE_KILLS) await sleep(100 + random() * 1200);
        else await eventually('todas as vendas finalizadas', () => finishedSales(dataDir) >= OUTAGE_SALES, HANG_BOUND_MS);
        current.child.kill('SIGKILL');
        await current.exited;
        kills++;
      }
      await service.restart({ hard: true });
      serviceBack = true;
    } finally {
      if (!serviceBack) await service.restart({ hard: true });
    }
    // The catch-up: killed again while it transmits and reconciles, then left to drain.
    const authority = api(service.url, company.token);
    expect((await authority.post('/api/v1/sandbox/autoridade', { latencia_ms: CATCH_UP_LATENCY_MS })).status).toBe(200);
    const catchUpKills: CatchUp[] = [];
    for (let life = 1; ; life++) {
      const before = catchUpNow(dataDir);
      const current = startTerminal(dataDir, company.token, announced, log, OUTAGE_SALES);
      await current.ready;
      if (life <= CATCH_UP_KILLS) {
        const kill = catchUpMoved(dataDir, before, current.exited).then(async (progress) => {
          if (!progress) return 'exited';
          await sleep(random() * (life === 1 ? 200 : 800));
          return 'kill';
        });
        const outcome = await Promise.race([current.drained.then(() => 'drained'), kill]);
        if (outcome === 'kill') {
          current.child.kill('SIGKILL');
          await current.exited;
          kills++;
          catchUpKills.push(catchUpNow(dataDir));
          if (life === 1) expect((await authority.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 })).status).toBe(200);
          continue;
        }
      }
      const drained = await current.drained;
      const code = await current.exited;
      expect({ drained, code }, `${context}\n${log.slice(-30).join('\n')}`).toEqual({ drained: true, code: 0 });
      break;
    }
    // At least one SIGKILL landed in the middle of the catch-up: some receipts already with the
    // service, others still waiting for their authorization.
    const midway = catchUpKills.filter((c) => c.accepted > 0 && c.waiting > 0);
    expect(midway.length, `${context} ${JSON.stringify(catchUpKills)}`).toBeGreaterThan(0);

    // ---- The terminal's own record
    const db = new Database(join(dataDir, POS_DB_FILE), { readonly: true, fileMustExist: true });
    type Row = {
      id: string;
      sale_id: string;
      nnf: number;
      state: string;
      tp_emis: number;
      chave: string;
      signed_xml: string;
      idempotency_key: string;
      service_id: string;
    };
    let receipts: Row[];
    let tasks: { nnf: number; state: string; outcome: string }[];
    try {
      const sales = db.prepare("SELECT id FROM sales WHERE state = 'finished'").pluck().all() as string[];
      expect(sales.length, context).toBe(OUTAGE_SALES);
      receipts = db.prepare('SELECT * FROM receipts ORDER BY nnf').all() as Row[];
      expect(new Set(receipts.map((r) => r.sale_id)), context).toEqual(new Set(sales));
      expect(
        receipts.filter((r) => r.state !== 'authorized' || r.tp_emis !== 9).map((r) => [r.nnf, r.state, r.tp_emis]),
        context,
      ).toEqual([]);
      tasks = db.prepare('SELECT nnf, state, outcome FROM reconciliation_tasks ORDER BY nnf').all() as typeof tasks;
      expect(
        tasks.filter((t) => t.state !== 'done' || t.outcome !== 'inutilizada'),
        context,
      ).toEqual([]);
      // Every number taken is a receipt or a voided attempt, never both, none skipped.
      const taken = [...receipts.map((r) => r.nnf), ...tasks.map((t) => t.nnf)].sort((a, b) => a - b);
      expect(taken, context).toEqual(Array.from({ length: taken.length }, (_, i) => i + 1));
      expect(db.prepare('SELECT next_nnf FROM series WHERE serie = 1').pluck().get(), context).toBe(taken.length + 1);
      // One live-or-done emission per receipt, with its own key and its signed XML.
      const emits = db.prepare("SELECT receipt_id, idempotency_key, payload FROM outbox WHERE kind = 'emit' AND state = 'done'").all() as {
        receipt_id: string;
        idempotency_key: string;
        payload: string;
      }[];
      expect(emits.length, context).toBe(receipts.length);
      const byId = new Map(receipts.map((r) => [r.id, r]));
      for (const e of emits) {
        expect(e.idempotency_key).toBe(byId.get(e.receipt_id)!.idempotency_key);
        expect(JSON.parse(e.payload)).toEqual({ xml: byId.get(e.receipt_id)!.signed_xml });
      }
      const announcedIds = new Set(announced.values());
      for (const id of announcedIds) expect(byId.has(id), `${context} recibo anunciado ${id}`).toBe(true);
      const periods = db.prepare('SELECT automatic, ended_at FROM contingency_periods').all() as { automatic: number; ended_at: string | null }[];
      expect(periods.length, context).toBeGreaterThan(0);
      expect(
        periods.filter((p) => p.ended_at === null),
        context,
      ).toEqual([]);
    } finally {
      db.close();
    }

    // ---- The service: each receipt authorized with the key and digest the terminal signed
    const http = api(service.url, company.token);
    for (const r of receipts) {
      const doc = await http.get(`/api/v1/nfce/${r.service_id}`);
      expect(doc.body, `${context} nNF ${r.nnf}`).toMatchObject({
        status: 'autorizado',
        numero: r.nnf,
        chave: r.chave,
        contingencia: true,
        referencia_externa: r.idempotency_key,
      });
      expect(digestValueOf((await http.get(`/api/v1/nfce/${r.service_id}/xml`)).text), context).toBe(digestValueOf(r.signed_xml));
    }

    // ---- The authority: each number once, authorized (the receipts) or voided (the attempts in doubt)
    const authorityDb = new Database(join(serviceDir, 'sandbox-authority.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const authorized = authorityDb.prepare("SELECT number, tp_emis FROM nfe WHERE cnpj = ? AND model = '65' AND serie = 1 ORDER BY number").all(company.cnpj);
      expect(authorized, context).toEqual(receipts.map((r) => ({ number: r.nnf, tp_emis: 9 })));
      const voided = authorityDb
        .prepare("SELECT first_number, last_number FROM voided_range WHERE cnpj = ? AND model = '65' ORDER BY first_number")
        .all(company.cnpj);
      expect(voided, context).toEqual(tasks.map((t) => ({ first_number: t.nnf, last_number: t.nnf })));
    } finally {
      authorityDb.close();
    }
    console.log(
      `caos em contingência: ${kills} SIGKILL do terminal (${catchUpKills.length} na retomada, ` +
        `a cada uma enviadas/autorizadas/aguardando: ${catchUpKills.map((c) => `${c.accepted}/${c.authorized}/${c.waiting}`).join(', ')}), ` +
        `${receipts.length} NFC-e offline, ${tasks.length} número(s) em dúvida inutilizado(s); ${context}`,
    );
  },
);
