// A company that moves from homologação to produção (balcao company update) while NFC-e it
// accepted in homologação still wait to be signed: the real store, signer, queue and sandbox
// authority in this process, the queue started only after the move so the order is certain.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEMO_CSC, sampleNfceRequest } from '../../fiscal/samples.ts';
import { createCompany, updateCompany } from '../companies.ts';
import { createServiceDeps, type ServiceDeps } from '../deps.ts';
import { openService, type OpenedService } from '../open-service.ts';
import { acceptJson } from './accept.ts';
import { nfceIssuer } from './issuer.ts';
import { NfceQueue } from './queue.ts';
import type { NfceBody } from './schemas.ts';

const legacyPfx = readFileSync(new URL('../../fiscal/testdata/legacy-rc2-40.pfx', import.meta.url));

let dir: string;
let opened: OpenedService;
let deps: ServiceDeps;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-nfce-environment-'));
  opened = await openService(dir, {});
  deps = createServiceDeps({ mode: 'sandbox', store: opened.store, secrets: opened.secrets });
});

afterAll(async () => {
  deps?.authority.close();
  await opened?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

const silent = { debug: () => undefined, warn: () => undefined, error: () => undefined };

it('a receipt accepted in homologação is never signed for produção: the service rejects it and nothing reaches the authority', async () => {
  const { companyId } = await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'LOJA LEGADA LTDA', cscId: DEMO_CSC.id, csc: DEMO_CSC.token });
  const now = await deps.clock.now(companyId);
  const homologacao = await nfceIssuer(deps, companyId, now);
  const ids: string[] = [];
  for (const nNF of [1, 2]) {
    const accepted = acceptJson(sampleNfceRequest({ nNF }) as NfceBody, homologacao, randomUUID(), now);
    expect(accepted.ambiente).toBe('homologacao');
    expect((await opened.store.nfce.insertDocument({ ...accepted, idempotencyKey: null })).kind).toBe('new');
    ids.push(accepted.id);
  }

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
    const documents = () => Promise.all(ids.map(async (id) => (await opened.store.nfce.getDocument(companyId, id))!));
    await expect.poll(async () => (await documents()).map((d) => d.status)).toEqual(['rejeitado', 'rejeitado']);
    for (const d of await documents()) {
      expect(d.codigoStatus).toBeNull(); // refused by the service, not by the authority
      expect(d.motivo).toContain('a empresa passou de homologacao para producao');
    }
    const atAuthority = await Promise.all((await documents()).map((d) => deps.authority.consultNfe(homologacao.authority, d.chave)));
    expect(atAuthority.filter((f) => f.found)).toEqual([]);
  } finally {
    await queue.stop();
  }
});
