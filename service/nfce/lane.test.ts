// The NFC-e queue with the real store, signer and sandbox authority in this process.
//
// - Stopping it while it is taking a batch. A signal can arrive while the queue looks for due
//   documents or signs them (on the signing thread, so other events run meanwhile); the
//   real-process shutdown test cannot aim at those instants, so here the lane holds the queue
//   there. Whatever was taken but not yet committed must go back unsent, and the lane must not
//   be closed under it.
// - A company that moves from homologação to produção (balcao company update) while NFC-e it
//   accepted in homologação still wait to be signed; the queue is started only after the move,
//   so the order is certain.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CSC, sampleNfceRequest } from '../../fiscal/samples.ts';
import { createCompany, updateCompany } from '../companies.ts';
import { createServiceDeps, type ServiceDeps } from '../deps.ts';
import { openService, type OpenedService } from '../open-service.ts';
import { acceptJson } from './accept.ts';
import { authorizingIssuer } from '../queue/issuer.ts';
import { AuthorizationQueue, type QueueLane } from '../queue/authorization-queue.ts';
import { NfceQueue, nfceLane } from './lane.ts';
import type { NfceBody } from './schemas.ts';
import type { NfceSend, NfceWork } from './store.ts';

let dir: string;
let opened: OpenedService;
let deps: ServiceDeps;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-nfce-queue-'));
  opened = await openService(dir, {});
  deps = createServiceDeps({ mode: 'sandbox', store: opened.store, secrets: opened.secrets });
});

afterAll(async () => {
  deps?.authority.close();
  await opened?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

// One CNPJ per company: the authority numbers per CNPJ, and each company starts at nNF 1.
// 11222333000181 is kept for the move to produção (the certificate used there is its).
const CNPJS = ['11444777000161', '22345678000149'];
let cnpjs = 0;

/** A company with `count` NFC-e accepted (as POST /nfce stores them) and none sent yet. */
async function companyWithQueued(count: number, cnpj = CNPJS[cnpjs++]!) {
  const { companyId } = await createCompany(opened, { cnpj, uf: 'SP', nome: 'Loja da Fila', cscId: DEMO_CSC.id, csc: DEMO_CSC.token });
  const now = await deps.clock.now(companyId);
  const issuer = await authorizingIssuer(deps, companyId, now);
  const ids: string[] = [];
  for (let nNF = 1; nNF <= count; nNF++) {
    const accepted = acceptJson(sampleNfceRequest({ nNF }) as NfceBody, issuer, randomUUID(), now);
    expect((await opened.store.nfce.insertDocument({ ...accepted, idempotencyKey: null })).kind).toBe('new');
    ids.push(accepted.id);
  }
  const documents = async () => Promise.all(ids.map(async (id) => (await opened.store.nfce.getDocument(companyId, id))!));
  const atAuthority = async () => {
    const found = await Promise.all((await documents()).map((d) => deps.authority.consultNfe(issuer.authority, d.chave)));
    return found.filter((f) => f.found).length;
  };
  return { companyId, documents, atAuthority };
}

/** The real NFC-e lane, held at `step` until `open()`; `events` tells the order things happened in. */
function heldLane(step: 'due' | 'prepare') {
  const lane = nfceLane(deps, silent);
  const events: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let reached!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  const hold = async (at: typeof step) => {
    if (at !== step) return;
    reached();
    await gate;
  };
  const wrapped: QueueLane<NfceWork, NfceSend> = {
    ...lane,
    async due(...args) {
      await hold('due');
      const due = await lane.due(...args);
      events.push('due');
      return due;
    },
    async prepare(...args) {
      await hold('prepare');
      const prepared = await lane.prepare(...args);
      events.push('prepare');
      return prepared;
    },
    async close() {
      events.push('close');
      await lane.close?.();
    },
  };
  return { lane: wrapped, events, held, open };
}

const queueOver = (lane: QueueLane<NfceWork, NfceSend>) => new AuthorizationQueue({ deps, log: silent, lane, pollMs: 20 });

/** Starts a queue over the lane held at `step`, stops it there, then lets the lane go; what happened, in order. */
async function stoppedWhileHeld(step: 'due' | 'prepare'): Promise<string[]> {
  const { lane, events, held, open } = heldLane(step);
  const queue = queueOver(lane);
  queue.start();
  await held;
  const stopped = queue.stop();
  open();
  await stopped;
  return events;
}

describe('AuthorizationQueue.stop while a batch is being taken', () => {
  it('stopped while signing: the batch goes back unsent and uncommitted; the next start sends it with the same keys', async () => {
    const { documents, atAuthority } = await companyWithQueued(3);
    const before = await documents();
    const events = await stoppedWhileHeld('prepare');
    expect(events.at(-1)).toBe('close');
    expect(events.filter((e) => e === 'prepare')).toHaveLength(3);
    expect((await documents()).map((d) => ({ status: d.status, attempts: d.attempts, signed: d.signed }))).toEqual(
      before.map(() => ({ status: 'processando', attempts: 0, signed: false })),
    );
    expect(await atAuthority()).toBe(0);

    const next = queueOver(nfceLane(deps, silent));
    next.start();
    await expect.poll(async () => (await documents()).map((d) => d.status)).toEqual(['autorizado', 'autorizado', 'autorizado']);
    await next.stop();
    expect((await documents()).map((d) => d.chave)).toEqual(before.map((d) => d.chave));
    expect(await atAuthority()).toBe(3);
  });

  it('stopped while looking for due documents: nothing is taken, and the lane is closed only after the look ended', async () => {
    const { documents, atAuthority } = await companyWithQueued(2);
    const events = await stoppedWhileHeld('due');
    expect(events).toEqual(['due', 'close']);
    expect((await documents()).map((d) => ({ status: d.status, attempts: d.attempts }))).toEqual([
      { status: 'processando', attempts: 0 },
      { status: 'processando', attempts: 0 },
    ]);
    expect(await atAuthority()).toBe(0);
  });
});

describe('a company that moves from homologação to produção while receipts wait', () => {
  const legacyPfx = readFileSync(new URL('../../fiscal/testdata/legacy-rc2-40.pfx', import.meta.url));

  it('a receipt accepted in homologação is never signed for produção: the service rejects it and nothing reaches the authority', async () => {
    // The certificate for produção (legacy-rc2-40.pfx) is the one of 11222333000181.
    const { companyId, documents, atAuthority } = await companyWithQueued(2, '11222333000181');
    expect((await documents()).map((d) => d.ambiente)).toEqual(['homologacao', 'homologacao']);

    await updateCompany(opened, companyId, {
      ambiente: 'producao',
      ie: '110042490114',
      logradouro: 'Rua Augusta',
      numero: '100',
      bairro: 'Consolação',
      municipio: '3550308',
      cep: '01305000',
      certificate: { pfx: legacyPfx, password: 'senha-antiga' },
    });

    const queue = new NfceQueue({ deps, log: silent });
    queue.start();
    try {
      await expect.poll(async () => (await documents()).map((d) => d.status)).toEqual(['rejeitado', 'rejeitado']);
      for (const d of await documents()) {
        expect(d.codigoStatus).toBeNull(); // refused by the service, not by the authority
        expect(d.motivo).toContain('a empresa passou de homologacao para producao');
      }
      expect(await atAuthority()).toBe(0);
    } finally {
      await queue.stop();
    }
  });
});
