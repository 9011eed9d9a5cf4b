// Every dated rule of the law table (fiscal/law/table.ts), on both sides of each of its dates: the
// same sale built by the NFC-e builder, and judged by the sandbox authority's rules, dated the day
// before the change and the day of it (or the last day in force and the day after). A row without
// a probe here fails the suite, so a rule added to the table comes with its test.

import { describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import type { Emitter } from '../fiscal/company.ts';
import { FieldError } from '../fiscal/errors.ts';
import { LAW_TABLE, type Environment, type LawRow } from '../fiscal/law/table.ts';
import { buildMdfe } from '../fiscal/mdfe/build.ts';
import { buildNfce, signBuiltNfce } from '../fiscal/nfce/build.ts';
import type { NfceRequest } from '../fiscal/nfce/types.ts';
import { DEMO_CNPJ, DEMO_CSC, demoEmitter, sampleMdfeRequest, sampleNfceRequest } from '../fiscal/samples.ts';
import type { AuthorityCompany } from '../service/authority/port.ts';
import { checkNfe } from '../service/authority/sandbox-rules.ts';

const certificate = generateTestCertificate({ cnpj: DEMO_CNPJ, xNome: 'MERCADO BALCAO' }).certificate;
const credentials = { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem };
const authority: AuthorityCompany = { id: 'loja', cnpj: DEMO_CNPJ, uf: 'SP', environment: 'homologacao', csc: DEMO_CSC, credentials };
const ICMS00 = { ICMS: { ICMS00: { orig: '0', CST: '00', modBC: '3', vBC: '0.00', pICMS: '18.00', vICMS: '0.00' } } };

/** A regime-normal (CRT 3) company that states the CBS from 2027 (not published) so a 2027 sale can be built. */
const crt3: Emitter = demoEmitter({
  crt: 3,
  ibsCbs: { optIn: false, defaultClassification: { CST: '000', cClassTrib: '000001' }, rates: [{ from: '2027-01-01', pCBS: '8.80' }] },
});

let nNF = 0;
/** The demo cart, one item of 100.00, paid as `pag` says (cash by default). */
function sale(pag: NfceRequest['pag'] = [{ tPag: '01', vPag: '100.00' }], crt3Taxes = false): NfceRequest {
  const body = sampleNfceRequest({ nNF: ++nNF, items: 1 });
  const p = body.det[0]!.prod;
  p.qCom = p.qTrib = '1';
  p.vUnCom = p.vUnTrib = p.vProd = '100.00';
  if (crt3Taxes) body.det[0]!.imposto = structuredClone(ICMS00);
  body.total = { vProd: '100.00', vNF: '100.00' };
  body.pag = pag;
  return body;
}

const at = (date: string) => `${date}T10:00:00-03:00`;

/** The builder's answer: the XML, or the fields it refused. */
function built(body: NfceRequest, date: string, emitter: Emitter = demoEmitter()): { xml: string } | { refused: string[] } {
  try {
    return { xml: buildNfce(body, { emitter, dhEmi: at(date), tpEmis: 1 }).xml };
  } catch (err) {
    if (err instanceof FieldError) return { refused: err.issues.map((i) => i.field) };
    throw err;
  }
}

/** The sandbox's verdict on the sale built as `body` (cash if the builder would refuse it), changed by `edit` and signed. */
function judged(body: NfceRequest, date: string, edit: (xml: string) => string, emitter: Emitter = demoEmitter()): string {
  const ctx = { emitter, dhEmi: at(date), tpEmis: 1 as const, credentials };
  const b = buildNfce(body, ctx);
  const xml = edit(b.xml);
  expect(xml, 'a mudança não se aplicou').not.toBe(b.xml);
  const verdict = checkNfe(authority, signBuiltNfce({ ...b, xml }, ctx).xml, '35');
  return verdict.ok ? (verdict.document.alert ? `120 ${verdict.document.alert.cMsg}` : '100') : verdict.rejection.cStat;
}

const field = (xml: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
const outcome = (b: { xml: string } | { refused: string[] }, name: string): string => ('xml' in b ? (field(b.xml, name) ?? 'sem grupo') : `422 ${b.refused}`);

const dayAfter = (d: string) => new Date(Date.parse(`${d}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
const dayBefore = (d: string) => new Date(Date.parse(`${d}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

/** What a rule does on a day, in a few words a test can compare. */
type Probe = (date: string, row: LawRow) => unknown;

/** The fields a builder refused, or 'aceito'. */
function refusedBy(build: () => unknown): string {
  try {
    build();
    return 'aceito';
  } catch (err) {
    if (err instanceof FieldError) return err.issues.map((i) => i.field).join(',');
    throw err;
  }
}

/** An emitter, and a party (consumer, acquirer, contractor) with letters elsewhere. */
const ALPHA = '12ABC34501DE35';
const ALPHA_PARTY = 'G9PQPJHY9KPK34';

/**
 * An NFC-e and an MDF-e of an emitter with an alphanumeric CNPJ, to a consumer, a card acquirer and
 * a contractor with one, in the row's environment: what each builder refuses, field by field.
 */
const alphanumericProbe: Probe = (date, row) => {
  const emitter = demoEmitter({ cnpj: ALPHA, environment: row.environment as Environment });
  const nfce = sale([{ tPag: '03', vPag: '100.00', card: { tpIntegra: '2', CNPJ: ALPHA_PARTY } }]);
  nfce.dest = { cnpj: ALPHA_PARTY };
  const mdfe = sampleMdfeRequest({ nMDF: 1 });
  mdfe.rodo.infContratante = [{ xNome: 'Contratante Alfa Ltda', CNPJ: ALPHA_PARTY }];
  return {
    nfce: refusedBy(() => buildNfce(nfce, { emitter, dhEmi: at(date), tpEmis: 1 })),
    mdfe: refusedBy(() => buildMdfe(mdfe, { emitter, dhEmi: at(date) })),
  };
};

/** A store in Curitiba (PR, where the law table requires infRespTec), in the row's environment. */
const curitiba = (environment: Environment): Emitter =>
  demoEmitter({ environment, address: { ...demoEmitter().address, xLgr: 'Rua XV de Novembro', cMun: '4106902', xMun: 'Curitiba', UF: 'PR', CEP: '80020310' } });
const RESP_TEC = { cnpj: ALPHA_PARTY, contact: 'Suporte Fiscal', email: 'fiscal@balcao.dev', phone: '4133334444', csrt: { id: 1, token: 'CSRT-DE-TESTE' } };

/** The sandbox's verdict on a PR store's sale without and with the technical responsible. */
const respTecProbe: Probe = (date, row) => {
  const environment = row.environment as Environment;
  const company: AuthorityCompany = { ...authority, uf: 'PR', environment };
  const verdict = (emitter: Emitter): string => {
    const ctx = { emitter, dhEmi: at(date), tpEmis: 1 as const, credentials };
    const v = checkNfe(company, signBuiltNfce(buildNfce(sale(), ctx), ctx).xml, '41');
    return v.ok ? '100' : v.rejection.cStat;
  };
  return { sem: verdict(curitiba(environment)), com: verdict({ ...curitiba(environment), respTec: RESP_TEC }) };
};

const tPagProbe: Probe = (date, row) => {
  const tPag = (row as { tPag: string }).tPag;
  return {
    builder: outcome(built(sale([{ tPag, vPag: '100.00' }]), date), 'tPag'),
    sandbox: judged(sale(), date, (x) => x.replace('<tPag>01</tPag>', `<tPag>${tPag}</tPag>`)),
  };
};

const PROBES: Record<string, Probe> = {
  'ibscbs-grupos': (date) => outcome(built(sale(undefined, true), date, crt3), 'cClassTrib'),
  // Built as a Simples NFC-e (no groups), then declared CRT 3: the authority's 1115 or its alert.
  'ibscbs-rejeicao-1115': (date) => judged(sale(), date, (x) => x.replace('<CRT>1</CRT>', '<CRT>3</CRT>')),
  'ibscbs-aliquotas': (date) => {
    const b = built(sale(undefined, true), date, crt3);
    if (!('xml' in b) || !b.xml.includes('<pIBSUF>')) return outcome(b, 'pIBSUF');
    return `${field(b.xml, 'pIBSUF')} ${field(b.xml, 'pIBSMun')} ${field(b.xml, 'pCBS')}`;
  },
  // Nobody states the CBS (no company override, no operator): what a CRT 3 sale carries.
  'ibscbs-aliquotas-provisorias': (date) => {
    const b = built(sale(undefined, true), date, demoEmitter({ crt: 3 }));
    return 'xml' in b ? field(b.xml, 'pCBS') : outcome(b, 'pCBS');
  },
  'ibscbs-no-preco': (date) => {
    const b = built(sale(undefined, true), date, crt3);
    return 'xml' in b ? field(/<IBSCBS>.*<\/IBSCBS>/.exec(b.xml)![0], 'vBC') : outcome(b, 'vBC');
  },
  'cnpj-alfanumerico': alphanumericProbe,
  'resp-tec-obrigatorio': respTecProbe,
  tpag: tPagProbe,
  'tpag-grupo-cartao': (date, row) => {
    const tPag = (row as { tPag: string }).tPag;
    const withCard = sale([{ tPag, vPag: '100.00', card: { tpIntegra: '2' } }]);
    return {
      builder: outcome(built(sale([{ tPag, vPag: '100.00' }]), date), 'tPag'),
      sandbox: judged(withCard, date, (x) => x.replace('<card><tpIntegra>2</tpIntegra></card>', '')),
    };
  },
};

/** Before its day, every CNPJ with letters is refused on its own field. */
const ALPHA_REFUSED = { nfce: 'emit.CNPJ,dest.cnpj,pag[0].card.CNPJ', mdfe: 'emitente.CNPJ,rodo.infContratante[0].CNPJ' };

/** What each boundary shows: [the day before the change (or the last day in force), the day of it (or the day after)]. */
const EXPECTED: Record<string, [before: unknown, on: unknown]> = {
  'ibscbs-grupos 2026-01-01': ['sem grupo', '000001'],
  'ibscbs-rejeicao-1115 homologacao 2026-07-01': ['120 1115', '1115'],
  'ibscbs-aliquotas 2026-01-01': ['sem grupo', '0.10 0.00 0.90'],
  'ibscbs-aliquotas ..2026-12-31': ['0.10 0.00 0.90', '0.05 0.05 8.80'],
  'ibscbs-aliquotas 2027-01-01': ['0.10 0.00 0.90', '0.05 0.05 8.80'],
  // From 2029 nothing is published: the company states only the CBS, so the IBS rates are asked for.
  'ibscbs-aliquotas ..2028-12-31': ['0.05 0.05 8.80', '422 emit.ibsCbs.rates,emit.ibsCbs.rates'],
  'ibscbs-aliquotas-provisorias 2027-01-01': ['0.90', '8.80'],
  'ibscbs-aliquotas-provisorias ..2028-12-31': ['8.80', '422 emit.ibsCbs.rates,emit.ibsCbs.rates,emit.ibsCbs.rates'],
  'ibscbs-no-preco 2027-01-01': ['100.00', '91.83'],
  'cnpj-alfanumerico homologacao 2026-06-15': [ALPHA_REFUSED, { nfce: 'aceito', mdfe: 'aceito' }],
  'cnpj-alfanumerico producao 2026-07-01': [ALPHA_REFUSED, { nfce: 'aceito', mdfe: 'aceito' }],
  'resp-tec-obrigatorio producao 2019-06-03': [
    { sem: '100', com: '100' },
    { sem: '972', com: '100' },
  ],
  'tpag 20 2024-07-01': [
    { builder: '422 pag[0].tPag', sandbox: '899' },
    { builder: '20', sandbox: '100' },
  ],
  'tpag 21 2024-07-01': [
    { builder: '422 pag[0].tPag', sandbox: '899' },
    { builder: '21', sandbox: '100' },
  ],
  'tpag 22 2024-07-01': [
    { builder: '422 pag[0].tPag', sandbox: '899' },
    { builder: '22', sandbox: '100' },
  ],
  'tpag 91 2025-11-03': [
    { builder: '422 pag[0].tPag', sandbox: '899' },
    { builder: '91', sandbox: '100' },
  ],
  'tpag 23 2026-05-04': [
    { builder: '422 pag[0].tPag', sandbox: '899' },
    { builder: '23', sandbox: '100' },
  ],
  'tpag 24 2026-05-04': [
    { builder: '422 pag[0].tPag', sandbox: '899' },
    { builder: '24', sandbox: '100' },
  ],
  'tpag-grupo-cartao 17 2025-09-01': [
    { builder: '17', sandbox: '100' },
    { builder: '422 pag[0].card', sandbox: '391' },
  ],
};

/** Each boundary of each dated row, named as EXPECTED names it. */
const boundaries = LAW_TABLE.flatMap((row) => {
  const name = [row.rule, 'tPag' in row ? row.tPag : row.environment].filter(Boolean).join(' ');
  return [
    ...(row.from ? [{ row, name: `${name} ${row.from}`, days: [dayBefore(row.from), row.from] as const }] : []),
    ...(row.until ? [{ row, name: `${name} ..${row.until}`, days: [row.until, dayAfter(row.until)] as const }] : []),
  ];
});

describe('the law by date: each dated rule the day before and the day of its change', () => {
  it('every dated row has a probe and an expectation, and nothing expected is left without a row', () => {
    expect(LAW_TABLE.every((r) => PROBES[r.rule] !== undefined)).toBe(true);
    expect(boundaries.map((b) => b.name).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it('resp-tec-obrigatorio in homologação has no date (in force before any document issued now): a PR store’s sale without infRespTec is rejected 972, an SP store’s is not', () => {
    const homologacao = LAW_TABLE.find((r) => r.rule === 'resp-tec-obrigatorio' && r.environment === 'homologacao')!;
    expect(respTecProbe('2026-11-27', homologacao)).toEqual({ sem: '972', com: '100' });
    expect(judged(sale(), '2026-11-27', (x) => x.replace(/<infRespTec>.*<\/infRespTec>/, ''), demoEmitter({ respTec: RESP_TEC }))).toBe('100');
  });

  it.each(boundaries)('$name', ({ row, name, days }) => {
    const probe = PROBES[row.rule]!;
    const [before, on] = days.map((d) => probe(d, row));
    expect(before).not.toEqual(on);
    expect([before, on]).toEqual(EXPECTED[name]);
  });
});
