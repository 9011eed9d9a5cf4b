// The tax reform (IBS/CBS) and NT 2026.002 over real HTTP, against the real service process and
// its sandbox authority:
// 1. a CRT 3 company's JSON NFC-e is authorized with the groups; values sent are checked (422);
//    above R$ 10.000,00 the consumer's document is asked for (422 on dest) before the authority
//    is; dated 2027, with the company's CBS rate for the period; dated 2027 with no rate from
//    anyone (the provisional one, said from 1 December), then the operator's one command
//    (`balcao ibscbs aliquotas`, or its API) for every company, a company's own rate still winning;
// 2. the sandbox answers every rule it checks when the rule is broken: each case is a signed NFC-e
//    built by the real builder, changed in one place, signed again with the company's
//    certificate and sent as a contingency XML, so the authority, not the builder, judges it;
// 3. cStat 120 "autorizado com alerta" is an authorization: status, XML with the alert, DANFE.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emitter } from '../fiscal/company.ts';
import { buildNfce, signBuiltNfce } from '../fiscal/nfce/build.ts';
import type { NfceItem, NfceRequest } from '../fiscal/nfce/types.ts';
import { demoEmitter, sampleNfceRequest } from '../fiscal/samples.ts';
import { validateXml } from '../fiscal/schema.ts';
import { verifyXmlSignature } from '../fiscal/signature.ts';
import { firstText } from '../fiscal/xml.ts';
import { registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { api, runCli, startService, type ServiceProcess } from './helpers/service-process.ts';

const ICMS00 = { ICMS: { ICMS00: { orig: '0', CST: '00', modBC: '3', vBC: '0.00', pICMS: '18.00', vICMS: '0.00' } } };

let service: ServiceProcess;
let crt3: TestCompany;
let producao: TestCompany;
let nNF = 100;

/** The operator's token (BALCAO_OPERATOR_TOKEN): turns on /api/v1/operador. */
const OPERATOR = 'operador-de-teste-0123456789abcdefghij';

beforeAll(async () => {
  service = await startService({ env: { BALCAO_OPERATOR_TOKEN: OPERATOR } });
  [crt3, producao] = await Promise.all([
    registerCompany(service.url, service.dataDir, { extra: { crt: '3' } }),
    registerCompany(service.url, service.dataDir, {
      extra: {
        crt: '3',
        ambiente: 'producao',
        ie: '123456789012',
        logradouro: 'Rua das Flores',
        numero: '100',
        bairro: 'Centro',
        municipio: '3550308',
        cep: '01001000',
      },
    }),
  ]);
});

afterAll(async () => {
  if (service) expect((await service.stop()).code).toBe(0);
});

/** The demo cart (Café 18.90, Açúcar 2 × 4.79, Arroz 3 × 27.45) with regime-normal ICMS. */
function cart(over: (item: NfceItem, i: number) => void = () => {}): NfceRequest {
  const body = sampleNfceRequest({ nNF: ++nNF });
  body.det.forEach((d, i) => {
    d.imposto = structuredClone(ICMS00);
    over(d, i);
  });
  return body;
}

/** One item (a TV) of `value`, paid in cash. */
function bigSale(value: string, dest?: NfceRequest['dest']): NfceRequest {
  const body = cart();
  body.det = body.det.slice(0, 1);
  const p = body.det[0]!.prod;
  p.vUnCom = p.vUnTrib = p.vProd = value;
  p.qCom = p.qTrib = '1';
  body.total = { vProd: value, vNF: value };
  body.pag = [{ tPag: '01', vPag: value }];
  if (dest) body.dest = dest;
  return body;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function issued(company: TestCompany, body: unknown): Promise<any> {
  const res = await company.client.post('/api/v1/nfce', body);
  expect(res.status, res.text).toBe(202);
  return waitFor(company.client, res.body.id);
}

describe('a CRT 3 company issues through the API', () => {
  it('the JSON NFC-e is authorized with IBSCBS on every item, vItem, IBSCBSTot and vNFTot; the nfeProc validates and its signature verifies', async () => {
    const body = cart((d, i) => {
      if (i === 2) d.imposto.IBSCBS = { CST: '200', cClassTrib: '200003' }; // rice: cesta básica
    });
    const doc = await issued(crt3, body);
    expect([doc.status, doc.codigo_status]).toEqual(['autorizado', '100']);
    const xml = (await crt3.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
    expect(validateXml(xml, 'procNFe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(xml).valid).toBe(true);
    expect([...xml.matchAll(/<cClassTrib>([0-9]+)<\/cClassTrib>/g)].map((m) => m[1])).toEqual(['000001', '000001', '200003']);
    expect([...xml.matchAll(/<vItem>([^<]+)<\/vItem>/g)].map((m) => m[1])).toEqual(['18.90', '9.58', '82.35']);
    const tot = /<IBSCBSTot>.*<\/IBSCBSTot>/.exec(xml)![0];
    expect(firstText(tot, 'vBCIBSCBS')).toBe('110.83');
    expect(firstText(tot, 'vIBS')).toBe('0.03'); // 0.02 + 0.01 + 0 (100 % less)
    expect(firstText(tot, 'vCBS')).toBe('0.26'); // 0.17 + 0.09 + 0
    expect(firstText(xml, 'vNFTot')).toBe('110.83');
  });

  it('values sent are checked: a wrong rate or amount is 422 naming the field, and the number stays free', async () => {
    const body = cart((d, i) => {
      if (i === 0) d.imposto.IBSCBS = { CST: '000', cClassTrib: '000001', gIBSCBS: { gIBSUF: { pIBSUF: '0.05' }, gCBS: { vCBS: '0.50' } } };
    });
    const res = await crt3.client.post('/api/v1/nfce', body);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { field: 'det[0].imposto.IBSCBS.gIBSCBS.gIBSUF.pIBSUF', message: expect.stringContaining('0.10 (rejeição 1026)') },
      { field: 'det[0].imposto.IBSCBS.gIBSCBS.gCBS.vCBS', message: expect.stringContaining('0.17, com tolerância de 0,01 (rejeição 1069)') },
    ]);
    body.det[0]!.imposto.IBSCBS = { CST: '000', cClassTrib: '000001', gIBSCBS: { gIBSUF: { pIBSUF: '0.1000', vIBSUF: '0.01' } } };
    const doc = await issued(crt3, body);
    expect(doc.status).toBe('autorizado');
    expect(/<vIBSUF>([^<]+)<\/vIBSUF>/.exec((await crt3.client.get(`/api/v1/nfce/${doc.id}/xml`)).text)?.[1]).toBe('0.01');
  });

  it('above R$ 10.000,00 without the CPF or CNPJ: 422 naming dest, before the authority is asked; with the CPF it is authorized', async () => {
    const body = bigSale('10500.00');
    const res = await crt3.client.post('/api/v1/nfce', body);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'dest', message: 'NFC-e acima de R$ 10.000,00 exige o CPF ou o CNPJ do consumidor (rejeição 750)' }]);
    // Nothing reached the authority: the same number is still free (no 539 duplicate).
    const doc = await issued(crt3, { ...body, dest: { cpf: '52998224725' } });
    expect([doc.status, doc.numero, doc.valor_total]).toEqual(['autorizado', body.ide.nNF, '10500.00']);
  });
});

describe('the sandbox authority applies each rule (contingency XML signed with the company certificate)', () => {
  const dhEmi = () => new Date();
  const ctx = (company: TestCompany, emitter: Emitter) => ({
    emitter,
    credentials: company.certificate,
    dhEmi: dhEmi(),
    tpEmis: 9 as const,
    contingency: { dhCont: new Date(Date.now() - 60_000), xJust: 'Sem conexao com a internet no caixa da loja' },
  });
  const crt3Emitter = () => demoEmitter({ cnpj: crt3.cnpj, crt: 3 });

  /** Replaces exactly one occurrence (or every one, with a global RegExp), failing when nothing matched. */
  function change(xml: string, from: string | RegExp, to: string): string {
    const out = xml.replace(from, to);
    expect(out, `mudança ${String(from)}`).not.toBe(xml);
    return out;
  }

  /** Builds, changes, signs and sends; resolves with the service's document once judged. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function judged(company: TestCompany, emitter: Emitter, body: NfceRequest, edit: (xml: string) => string): Promise<any> {
    const c = ctx(company, emitter);
    const built = buildNfce(body, c);
    const signed = signBuiltNfce({ ...built, xml: edit(built.xml) }, c);
    return issued(company, { xml: signed.xml });
  }

  const cases: [cStat: string, what: string, edit: (xml: string) => string][] = [
    ['1020', 'CST that does not exist', (x) => change(x, '<IBSCBS><CST>000</CST>', '<IBSCBS><CST>999</CST>')],
    [
      '1021',
      'gIBSCBS with a CST that has none (410)',
      (x) => change(x, '<CST>000</CST><cClassTrib>000001</cClassTrib>', '<CST>410</CST><cClassTrib>410008</cClassTrib>'),
    ],
    ['1022', 'CST 000 without gIBSCBS', (x) => change(x, /<gIBSCBS>.*?<\/gIBSCBS>/, '')],
    ['1023', 'cClassTrib that does not exist', (x) => change(x, '<cClassTrib>000001</cClassTrib>', '<cClassTrib>000099</cClassTrib>')],
    ['1024', 'cClassTrib of another CST', (x) => change(x, '<cClassTrib>000001</cClassTrib>', '<cClassTrib>200003</cClassTrib>')],
    ['1026', 'pIBSUF other than 0.10 in 2026', (x) => change(x, '<pIBSUF>0.10</pIBSUF>', '<pIBSUF>0.05</pIBSUF>')],
    ['1036', 'pIBSMun other than 0 in 2026', (x) => change(x, '<pIBSMun>0.00</pIBSMun>', '<pIBSMun>0.05</pIBSMun>')],
    ['1037', 'pCBS other than 0.90 in 2026', (x) => change(x, '<pCBS>0.90</pCBS>', '<pCBS>0.80</pCBS>')],
    ['1041', 'vIBSUF 0.03 off vBC × rate', (x) => change(x, '<vIBSUF>0.02</vIBSUF>', '<vIBSUF>0.05</vIBSUF>')],
    ['1052', 'vIBSMun 0.02 off', (x) => change(x, '<vIBSMun>0.00</vIBSMun>', '<vIBSMun>0.02</vIBSMun>')],
    ['1069', 'vCBS 0.13 off', (x) => change(x, '<vCBS>0.17</vCBS>', '<vCBS>0.30</vCBS>')],
    ['1150', 'vIBS other than vIBSUF + vIBSMun', (x) => change(x, '<vIBS>0.02</vIBS>', '<vIBS>0.05</vIBS>')],
    ['1119', 'items with IBSCBS and no IBSCBSTot', (x) => change(x, /<IBSCBSTot>.*?<\/IBSCBSTot>/, '')],
    ['1085', 'total IBS other than the items', (x) => change(x, '<vIBS>0.11</vIBS>', '<vIBS>0.12</vIBS>')],
    ['1091', 'total CBS other than the items', (x) => change(x, '<vCBS>1.00</vCBS>', '<vCBS>1.01</vCBS>')],
    ['715', 'an NFC-e with finNFe 4', (x) => change(x, '<finNFe>1</finNFe>', '<finNFe>4</finNFe>')],
  ];

  it.each(cases)('%s: %s', async (cStat, _what, edit) => {
    const doc = await judged(crt3, crt3Emitter(), cart(), edit);
    expect([doc.status, doc.codigo_status]).toEqual(['rejeitado', cStat]);
    expect(doc.motivo).toMatch(/^Rejeição: /);
    if (!['715', '1119', '1085', '1091'].includes(cStat)) expect(doc.motivo).toContain('[nItem:1]');
  });

  it('1115: a CRT 3 NFC-e without IBSCBS in homologação from 2026-07-01, naming the item', async () => {
    // Built as a Simples NFC-e (no groups), then declared CRT 3.
    const doc = await judged(crt3, demoEmitter({ cnpj: crt3.cnpj }), sampleNfceRequest({ nNF: ++nNF }), (x) => change(x, '<CRT>1</CRT>', '<CRT>3</CRT>'));
    expect([doc.status, doc.codigo_status, doc.motivo]).toEqual(['rejeitado', '1115', 'Rejeição: IBS/CBS não informado [nItem:1]']);
  });

  it('1118: IBSCBSTot in a document whose items carry no IBSCBS', async () => {
    const optedIn = demoEmitter({ cnpj: crt3.cnpj, ibsCbs: { optIn: true, defaultClassification: { CST: '000', cClassTrib: '000001' }, rates: [] } });
    const doc = await judged(crt3, optedIn, sampleNfceRequest({ nNF: ++nNF }), (x) => change(x, /<IBSCBS>.*?<\/IBSCBS>/g, ''));
    expect([doc.status, doc.codigo_status]).toEqual(['rejeitado', '1118']);
  });

  it('750: above R$ 10.000,00 without the consumer document', async () => {
    const doc = await judged(crt3, crt3Emitter(), bigSale('10500.00', { cpf: '52998224725' }), (x) => change(x, /<dest>.*?<\/dest>/, ''));
    expect([doc.status, doc.codigo_status]).toEqual(['rejeitado', '750']);
  });

  it('the same documents unchanged are authorized: the rules, not the harness, refuse them', async () => {
    expect((await judged(crt3, crt3Emitter(), cart(), (x) => x)).codigo_status).toBe('100');
    expect((await judged(crt3, crt3Emitter(), bigSale('10500.00', { cpf: '52998224725' }), (x) => x)).codigo_status).toBe('100');
  });

  it('120: in produção, where rule 1115 is not enforced, a CRT 3 NFC-e without IBSCBS is authorized with the alert; status, XML and DANFE treat it as authorized', async () => {
    const emitter = demoEmitter({ cnpj: producao.cnpj, environment: 'producao' });
    const doc = await judged(producao, emitter, sampleNfceRequest({ nNF: ++nNF }), (x) => change(x, '<CRT>1</CRT>', '<CRT>3</CRT>'));
    expect([doc.status, doc.codigo_status, doc.motivo]).toEqual(['autorizado', '120', 'Autorizado o uso da NF-e com alerta']);
    expect(doc.protocolo).toMatch(/^[0-9]{15}$/);
    const xml = (await producao.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
    expect(xml).toMatch(
      /<cStat>120<\/cStat><xMotivo>Autorizado o uso da NF-e com alerta<\/xMotivo><cMsg>1115<\/cMsg><xMsg>IBS\/CBS não informado \[nItem:1\]<\/xMsg>/,
    );
    expect(validateXml(xml, 'procNFe')).toEqual({ valid: true, errors: [] });
    const danfe = await producao.client.get(`/api/v1/nfce/${doc.id}/danfe`);
    expect(danfe.status).toBe(200);
    expect(danfe.headers.get('content-type')).toContain('application/pdf');
  });
});

describe('2027 through the API, with the CBS rate the company states for the period', () => {
  it('after balcao company update --ibscbs-aliquotas and the company clock in 2027, the NFC-e carries 0.05 / 0.05 / 8.80 and the sandbox authorizes it', async () => {
    const company = await registerCompany(service.url, service.dataDir, { extra: { crt: '3' } });
    const update = await runCli([
      'company',
      'update',
      '--data',
      service.dataDir,
      '--empresa',
      company.companyId,
      '--ibscbs-aliquotas',
      '2027-01-01..2027-12-31 cbs=8.80',
    ]);
    expect(update.code, update.stderr).toBe(0);
    expect(JSON.parse(update.stdout).ibs_cbs).toEqual({ opcao_simples: false, cst: '000', cclasstrib: '000001', aliquotas: '2027-01-01..2027-12-31 cbs=8.80' });

    const minutesTo2027 = Math.ceil((Date.parse('2027-01-05T12:00:00-03:00') - Date.now()) / 60_000);
    expect((await company.client.post('/api/v1/sandbox/relogio', { avancar_minutos: minutesTo2027 })).status).toBe(200);
    const doc = await issued(company, cart());
    expect(doc.status).toBe('autorizado');
    expect(doc.emitido_em).toMatch(/^2027-01-0/);
    const xml = (await company.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
    const first = /<IBSCBS>.*?<\/IBSCBS>/.exec(xml)![0];
    expect(['pIBSUF', 'pIBSMun', 'pCBS', 'vBC', 'vCBS'].map((n) => firstText(first, n))).toEqual(['0.05', '0.05', '8.80', '17.36', '1.53']);
    expect(firstText(xml, 'vNFTot')).toBe('110.83');
    expect(validateXml(xml, 'procNFe')).toEqual({ valid: true, errors: [] });
  });
});

describe('1 January 2027 with no CBS rate from anyone, then the operator’s one command for every company', () => {
  /** The first item's IBS/CBS rates of `company`'s next NFC-e (authorized and valid), dated in 2027 by its clock. */
  async function rates2027(company: TestCompany): Promise<string[]> {
    const doc = await issued(company, cart());
    expect(doc.status, JSON.stringify(doc)).toBe('autorizado');
    expect(doc.emitido_em).toMatch(/^2027-01-0/);
    const xml = (await company.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
    expect(validateXml(xml, 'procNFe')).toEqual({ valid: true, errors: [] });
    const first = /<IBSCBS>.*?<\/IBSCBS>/.exec(xml)![0];
    return ['pIBSUF', 'pIBSMun', 'pCBS'].map((n) => firstText(first, n)!);
  }
  const status = async (em: string) => {
    const r = await runCli(['ibscbs', 'status', '--data', service.dataDir, '--em', em]);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { aliquotas: string; aviso: string | null };
  };

  it('a CRT 3 sale is authorized with the provisional CBS; the operator was told from 1 December; balcao ibscbs aliquotas fixes every company at once', async () => {
    const [a, b, own] = await Promise.all([
      registerCompany(service.url, service.dataDir, { extra: { crt: '3' } }),
      registerCompany(service.url, service.dataDir, { extra: { crt: '3' } }),
      registerCompany(service.url, service.dataDir, { extra: { crt: '3', 'ibscbs-aliquotas': '2027-01-01..2027-12-31 cbs=8.80' } }),
    ]);
    const minutesTo2027 = Math.ceil((Date.parse('2027-01-05T12:00:00-03:00') - Date.now()) / 60_000);
    for (const c of [a, b, own]) expect((await c.client.post('/api/v1/sandbox/relogio', { avancar_minutos: minutesTo2027 })).status).toBe(200);

    // Nobody has said anything: silent on 30 November, in words from 1 December.
    expect((await status('2026-11-30')).aviso).toBeNull();
    expect((await status('2026-12-01')).aviso).toMatch(
      /^Alíquotas do IBS\/CBS de 2027: a partir de 01\/01\/2027 as NFC-e levarão a alíquota provisória do Balcão \(CBS 8,80 %\).*balcao ibscbs aliquotas/,
    );
    // …and the cashier sells on 1 January all the same.
    expect(await rates2027(a)).toEqual(['0.05', '0.05', '8.80']);

    // The operator's one command, on the running service: every company's next sale carries it.
    const set = await runCli(['ibscbs', 'aliquotas', '--data', service.dataDir, '--periodos', '2027-01-01..2027-12-31 cbs=8.70']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      aliquotas: '2027-01-01..2027-12-31 cbs=8.70',
      periodos: [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.70' }],
    });
    expect((await status('2026-12-01')).aviso).toBeNull();
    expect(await rates2027(a)).toEqual(['0.05', '0.05', '8.70']);
    expect(await rates2027(b)).toEqual(['0.05', '0.05', '8.70']);
    // A company's own rate still wins.
    expect(await rates2027(own)).toEqual(['0.05', '0.05', '8.80']);

    // The same through the operator's API: its own token only; a bad period named; a good one applies.
    const operatorApi = api(service.url, OPERATOR);
    expect((await api(service.url, a.token).get('/api/v1/operador/aliquotas-ibscbs')).status).toBe(401);
    expect((await operatorApi.get('/api/v1/operador/aliquotas-ibscbs')).body).toMatchObject({ aliquotas: '2027-01-01..2027-12-31 cbs=8.70' });
    const bad = await operatorApi.put('/api/v1/operador/aliquotas-ibscbs', { periodos: [{ from: '2027-01-01', to: '2026-12-31', pCBS: '8.75' }] });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([{ field: 'periodos[0].to', message: 'data final anterior à inicial' }]);
    const put = await operatorApi.put('/api/v1/operador/aliquotas-ibscbs', { periodos: [{ from: '2027-01-01', pCBS: '8.75' }] });
    expect(put.status, put.text).toBe(200);
    expect(await rates2027(b)).toEqual(['0.05', '0.05', '8.75']);
  });
});
