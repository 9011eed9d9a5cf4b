// Restart recovery of the returns' idempotency keys (issuance.ts): a key a stopped process claimed
// without storing its return is freed; the key of a return stored in `processando` stays locked
// (the queue settles it by consulting the authority).

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany } from '../companies.ts';
import { createServiceDeps } from '../deps.ts';
import { openService, type OpenedService } from '../open-service.ts';
import { Returns } from './issuance.ts';

let dir: string;
let opened: OpenedService;
let companyId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-nfe-recovery-'));
  opened = await openService(dir, {});
  companyId = (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja NF-e' })).companyId;
});

afterAll(async () => {
  await opened?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('Returns.recover', () => {
  it('frees a key whose return was never stored and keeps the others locked', async () => {
    const deps = createServiceDeps({ mode: 'sandbox', store: opened.store, secrets: opened.secrets });
    const claim = (key: string, documentId: string) => opened.store.claimIdempotencyKey({ companyId, docType: 'nfe', key, fingerprint: 'f', documentId });
    const orphan = randomUUID();
    expect(await claim('orfa', orphan)).toEqual({ kind: 'new' });

    const nfceId = randomUUID();
    const chaveNfce = '35261111222333000181650010000000011000000010';
    await opened.store.nfce.insertDocument({
      id: nfceId,
      companyId,
      idempotencyKey: null,
      serie: 1,
      numero: 1,
      chave: chaveNfce,
      cNF: '00000001',
      dhEmi: '2026-11-22T10:00:00-03:00',
      tpEmis: 1,
      contingencia: false,
      ambiente: 'homologacao',
      qrcode: null,
      urlConsulta: 'https://x.example/consulta',
      valorTotal: '10.00',
      requestJson: '{}',
      createdAt: new Date(),
    });
    const stored = randomUUID();
    expect(await claim('guardada', stored)).toEqual({ kind: 'new' });
    await opened.store.nfe.insertDocument({
      id: stored,
      companyId,
      tipo: 'devolucao',
      idempotencyKey: 'guardada',
      serie: 1,
      numero: 1,
      chave: '35261111222333000181550010000000011000000010',
      nfceId,
      chaveNfce,
      dhEmi: '2026-11-23T10:00:00-03:00',
      ambiente: 'homologacao',
      justificativa: 'Produto com defeito de fabricação',
      valorTotal: '5.00',
      itens: [{ numeroItem: 1, codigo: '1', descricao: 'Café', unidade: 'UN', quantidadeUnits: 10_000n, valor: '5.00' }],
      requestJson: '{}',
      signedXml: '<NFe/>',
      createdAt: new Date(),
    });

    await new Returns(deps, silent).recover();
    expect(await claim('orfa', randomUUID())).toEqual({ kind: 'new' });
    expect(await claim('guardada', randomUUID())).toEqual({ kind: 'in_progress', documentId: stored });
  });
});
