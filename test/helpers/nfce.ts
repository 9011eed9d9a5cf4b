// Helpers of the NFC-e tests: a company registered with a certificate the test holds (so it can
// sign contingency receipts as the terminal would), polling a document to its verdict, and
// read-only looks into the service's and the sandbox authority's SQLite files.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isValidCnpj } from '../../fiscal/br/documents.ts';
import { generateTestCertificate, type Certificate } from '../../fiscal/certificate.ts';
import { issueNfce } from '../../fiscal/nfce/build.ts';
import type { NfceRequest } from '../../fiscal/nfce/types.ts';
import { DEMO_CSC, demoEmitter, sampleNfceRequest } from '../../fiscal/samples.ts';
import { api, createCompany, tempDataDir, type ServiceData } from './service-process.ts';

export type Client = ReturnType<typeof api>;

export type TestCompany = {
  companyId: string;
  token: string;
  cnpj: string;
  certificate: Certificate;
  client: Client;
};

/** A valid CNPJ from 12 digits (the two check digits computed). */
export function cnpjOf(base12: string): string {
  const digit = (body: string) => {
    let weight = body.length - 7;
    let sum = 0;
    for (const c of body) {
      sum += Number(c) * weight--;
      if (weight < 2) weight = 9;
    }
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const first = base12 + digit(base12);
  const cnpj = first + digit(first);
  if (!isValidCnpj(cnpj)) throw new Error(`CNPJ gerado inválido: ${cnpj}`);
  return cnpj;
}

let sequence = 0;

/**
 * Registers a company (SP, homologação) through the real CLI, with a test certificate whose
 * private key the test keeps. `csc: false` registers it without a CSC.
 */
export async function registerCompany(
  serviceUrl: string,
  data: string | ServiceData,
  options: { csc?: boolean; cnpj?: string; /** More `balcao company create` options (crt, ambiente...). */ extra?: Record<string, string> } = {},
): Promise<TestCompany> {
  sequence += 1;
  const cnpj = options.cnpj ?? cnpjOf(`${String(10_000_000 + sequence * 7919).slice(0, 8)}0001`);
  const nome = `LOJA NFCE TESTE ${sequence}`;
  // A fixed password: a random base64url one may start with "-", which the CLI reads as an option.
  const password = 'senha-do-certificado';
  const { pfx, certificate } = generateTestCertificate({ cnpj, xNome: nome, password });
  const pfxFile = join(tempDataDir('balcao-pfx-'), 'empresa.pfx');
  writeFileSync(pfxFile, pfx);
  const { companyId, token } = await createCompany(data, {
    cnpj,
    uf: 'SP',
    nome,
    certificado: pfxFile,
    senha: password,
    ...(options.csc !== false && { 'csc-id': DEMO_CSC.id, csc: DEMO_CSC.token }),
    ...options.extra,
  });
  return { companyId, token, cnpj, certificate, client: api(serviceUrl, token) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls GET /nfce/{id} until `done` holds (default: a verdict), or fails after `timeoutMs`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function waitFor(client: Client, id: string, done: (doc: any) => boolean = (d) => d.status !== 'processando', timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await client.get(`/api/v1/nfce/${id}`);
    if (res.status !== 200) throw new Error(`GET /nfce/${id}: ${res.status} ${res.text}`);
    if (done(res.body)) return res.body;
    if (Date.now() > until) throw new Error(`NFC-e ${id} não chegou ao estado esperado: ${res.text}`);
    await sleep(50);
  }
}

/** A JSON NFC-e of the demo catalog (3 items, cash). */
export const nfceBody = (nNF: number, extra: Partial<NfceRequest> = {}, serie = 1): NfceRequest => ({
  ...sampleNfceRequest({ nNF, serie }),
  ...extra,
});

/** A card payment without the card group: the authority rejects it with 391. */
export function cardWithoutGroup(nNF: number): NfceRequest {
  const body = sampleNfceRequest({ nNF, payment: 'card' });
  delete body.pag[0]!.card;
  return body;
}

/** An integrated card payment (tpIntegra 1) without the acquirer's CNPJ and authorization code: rejection 392. */
export function cardWithoutIntegrationData(nNF: number): NfceRequest {
  const body = sampleNfceRequest({ nNF, payment: 'card' });
  body.pag[0]!.card = { tpIntegra: '1', tBand: '01' };
  return body;
}

/** An NFC-e issued and signed at the "terminal" in offline contingency (tpEmis 9), dated `now` (dhEmi). */
export function contingencyXml(
  company: Pick<TestCompany, 'cnpj' | 'certificate'>,
  nNF: number,
  credentials = company.certificate,
  now = new Date(),
): { xml: string; key: string; digestValue: string } {
  const issued = issueNfce(sampleNfceRequest({ nNF }), {
    emitter: demoEmitter({ cnpj: company.cnpj }),
    credentials,
    dhEmi: now,
    tpEmis: 9,
    contingency: { dhCont: new Date(now.getTime() - 60_000), xJust: 'Sem conexao com a internet no caixa da loja' },
  });
  return { xml: issued.xml, key: issued.key, digestValue: issued.digestValue };
}

/** Runs `read` on a read-only connection to one of the data directory's SQLite files. */
export function readDb<T>(dataDir: string, read: (db: Database.Database) => T, file = 'service.sqlite'): T {
  const db = new Database(join(dataDir, file), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}
