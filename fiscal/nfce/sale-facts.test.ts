import { beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../certificate.ts';
import { FieldError } from '../errors.ts';
import { nfeProtocolFor, wrapNfeProc } from '../protocol.ts';
import { demoEmitter, sampleNfceRequest } from '../samples.ts';
import type { SigningCredentials } from '../signature.ts';
import { issueNfce } from './build.ts';
import { nfceSaleFacts } from './sale-facts.ts';

let credentials: SigningCredentials;
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'FATOS TESTE' }).certificate;
});

function issued(tpEmis: 1 | 9 = 1) {
  const req = sampleNfceRequest({ nNF: 77, serie: 3, items: 2 });
  const total = req.total.vNF;
  req.pag = [
    { tPag: '03', vPag: '10.00', card: { tpIntegra: '2' } },
    { tPag: '01', vPag: (Number(total) - 10 + 5).toFixed(2) },
  ];
  req.vTroco = '5.00';
  return issueNfce(req, {
    emitter: demoEmitter(),
    dhEmi: '2026-03-10T14:03:05-03:00',
    tpEmis,
    credentials,
    ...(tpEmis === 9 ? { contingency: { dhCont: '2026-03-10T14:00:00-03:00', xJust: 'Sem conexão com a SEFAZ no momento' } } : {}),
  });
}

describe('nfceSaleFacts', () => {
  it('reads items, payments, change and totals of an authorized nfeProc, with its protocol', () => {
    const nfe = issued();
    const proc = wrapNfeProc(
      nfe.xml,
      nfeProtocolFor(nfe.xml, {
        cStat: 100,
        xMotivo: 'Autorizado o uso da NF-e',
        verAplic: 'T',
        dhRecbto: '2026-03-10T14:03:07-03:00',
        nProt: '135260000012345',
      }),
    );
    const facts = nfceSaleFacts(proc);
    expect(facts.chave).toBe(nfe.key);
    expect(facts).toMatchObject({ serie: 3, nNF: 77, dhEmi: '2026-03-10T14:03:05-03:00', tpEmis: 1, tpAmb: '2', vTrocoCents: 500n });
    expect(facts.authorization).toEqual({ nProt: '135260000012345', dhRecbto: '2026-03-10T14:03:07-03:00', cStat: '100' });
    expect(facts.items).toHaveLength(2);
    // The document's own arithmetic: items add up to vNF, payments minus change too.
    expect(facts.items.reduce((s, i) => s + i.valueCents, 0n)).toBe(facts.vNFCents);
    expect(facts.payments.reduce((s, p) => s + p.vPagCents, 0n) - facts.vTrocoCents).toBe(facts.vNFCents);
    expect(facts.payments.map((p) => p.tPag)).toEqual(['03', '01']);
  });

  it('reads a contingency NFe without protocol as not authorized', () => {
    const facts = nfceSaleFacts(issued(9).xml);
    expect(facts.tpEmis).toBe(9);
    expect(facts.authorization).toBeNull();
  });

  it('names what is missing', () => {
    expect(() => nfceSaleFacts('<NFe/>')).toThrow(FieldError);
    expect(() => nfceSaleFacts(issued().xml.replace(/<mod>65<\/mod>/, '<mod>55</mod>'))).toThrow(/modelo 55/);
  });
});
