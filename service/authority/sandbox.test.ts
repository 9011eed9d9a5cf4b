import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildAccessKey, checkDigit } from '../../fiscal/access-key.ts';
import { generateTestCertificate } from '../../fiscal/certificate.ts';
import type { Emitter } from '../../fiscal/company.ts';
import { mdfeCancellationEvent, mdfeClosingEvent, nfeCancellationEvent, nfeSubstitutionCancellationEvent } from '../../fiscal/events.ts';
import { buildInutilizacao } from '../../fiscal/inutilizacao.ts';
import { issueMdfe } from '../../fiscal/mdfe/build.ts';
import type { MdfeRequest } from '../../fiscal/mdfe/types.ts';
import { HOMOLOGACAO_DEST_XNOME, HOMOLOGACAO_XPROD, issueNfce, type IssuedNfce } from '../../fiscal/nfce/build.ts';
import type { NfceItem, NfceRequest } from '../../fiscal/nfce/types.ts';
import { brasiliaDateTime, wrapMdfeProc, wrapNfeProc, wrapProcEventoMDFe, wrapProcEventoNFe, wrapProcInutNFe } from '../../fiscal/protocol.ts';
import { validateXml } from '../../fiscal/schema.ts';
import { firstText } from '../../fiscal/xml.ts';
import { signXml, type SigningCredentials } from '../../fiscal/signature.ts';
import { AuthorityUnavailableError, type AuthorityCompany } from './port.ts';
import { SandboxAuthority, type SandboxAuthoritySettings } from './sandbox.ts';
import { MDFE, motivoWithDetail, NFE, readMdfeFacts, readNfeFacts } from './sandbox-rules.ts';

// ---------------------------------------------------------------------------------------------
// Two companies with their own (test) e-CNPJ certificates

const CNPJ_A = '11222333000181';
const CNPJ_B = '11444777000161';
const CSC = { id: '000001', token: 'CSC-DE-TESTE-123456' };

const certA = generateTestCertificate({ cnpj: CNPJ_A, xNome: 'LOJA TESTE LTDA' }).certificate;
const certB = generateTestCertificate({ cnpj: CNPJ_B, xNome: 'OUTRA EMPRESA LTDA' }).certificate;
const credsA: SigningCredentials = { privateKeyPem: certA.privateKeyPem, certificatePem: certA.certificatePem };
const credsB: SigningCredentials = { privateKeyPem: certB.privateKeyPem, certificatePem: certB.certificatePem };

const companyA: AuthorityCompany = { id: 'empresa-a', cnpj: CNPJ_A, uf: 'SP', environment: 'homologacao', csc: CSC, credentials: credsA };
const companyB: AuthorityCompany = { id: 'empresa-b', cnpj: CNPJ_B, uf: 'SP', environment: 'homologacao', csc: CSC, credentials: credsB };

const emitterA: Emitter = {
  cnpj: CNPJ_A,
  ie: '111222333444',
  xNome: 'LOJA TESTE LTDA',
  address: { xLgr: 'Avenida Paulista', nro: '1000', xBairro: 'Bela Vista', cMun: '3550308', xMun: 'São Paulo', UF: 'SP', CEP: '01310100' },
  crt: 1,
  environment: 'homologacao',
  csc: CSC,
  qrCodeVersion: 2,
};

// ---------------------------------------------------------------------------------------------
// The authority under test: a real SQLite file, per-company settings and clocks

const dir = mkdtempSync(join(tmpdir(), 'balcao-sandbox-authority-'));
const file = join(dir, 'sandbox-authority.sqlite');
const settings = new Map<string, SandboxAuthoritySettings>();
const clockOffsets = new Map<string, number>();
const options = {
  file,
  settings: (id: string) => settings.get(id) ?? { latencyMs: 0, available: true },
  clock: (id: string) => new Date(Date.now() + (clockOffsets.get(id) ?? 0)),
};
let authority: SandboxAuthority;

const advance = (companyId: string, minutes: number) => clockOffsets.set(companyId, (clockOffsets.get(companyId) ?? 0) + minutes * 60_000);
/** The company's sandbox clock now: what an issuer in step with the authority dates its documents by. */
const companyNow = (companyId: string) => new Date(Date.now() + (clockOffsets.get(companyId) ?? 0));

beforeAll(() => {
  authority = new SandboxAuthority(options);
});

afterEach(() => {
  settings.clear();
  clockOffsets.clear();
});

afterAll(() => {
  authority.close();
  rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// NFC-e helpers

function item(i: number): NfceItem {
  return {
    prod: {
      cProd: String(i),
      cEAN: 'SEM GTIN',
      xProd: `Produto ${i}`,
      NCM: '21069090',
      CFOP: '5102',
      uCom: 'UN',
      qCom: '1',
      vUnCom: '10.00',
      vProd: '10.00',
      cEANTrib: 'SEM GTIN',
      uTrib: 'UN',
      qTrib: '1',
      vUnTrib: '10.00',
      indTot: '1',
    },
    imposto: { ICMS: { ICMSSN102: { orig: '0', CSOSN: '102' } }, PIS: { PISNT: { CST: '07' } }, COFINS: { COFINSNT: { CST: '07' } } },
  };
}

/** A 10-item sale of 100.00 paid in cash. */
function sale(nNF: number, over: Partial<NfceRequest> = {}): NfceRequest {
  return {
    ide: { serie: 1, nNF },
    det: Array.from({ length: 10 }, (_, i) => item(i + 1)),
    total: { vProd: '100.00', vNF: '100.00' },
    pag: [{ tPag: '01', vPag: '100.00' }],
    ...over,
  };
}

type IssueOptions = {
  offline?: boolean;
  emitter?: Partial<Emitter>;
  credentials?: SigningCredentials;
  cNF?: string;
  dhEmi?: Date;
};

function issue(nNF: number, over: Partial<NfceRequest> = {}, o: IssueOptions = {}): IssuedNfce {
  const dhEmi = o.dhEmi ?? companyNow(companyA.id);
  return issueNfce(sale(nNF, over), {
    emitter: { ...emitterA, ...o.emitter },
    dhEmi,
    tpEmis: o.offline ? 9 : 1,
    contingency: o.offline ? { dhCont: new Date(dhEmi.getTime() - 60_000), xJust: 'Sem conexao com a internet no caixa' } : undefined,
    credentials: o.credentials ?? credsA,
    cNF: o.cNF,
  });
}

const SIGNATURE = /<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">.*<\/Signature>/s;

/** Changes a signed document and signs it again (so only the content rule under test fails). */
function resign(signed: string, change: (unsigned: string) => string, credentials = credsA): string {
  const unsigned = signed.replace(SIGNATURE, '');
  const changed = change(unsigned);
  expect(changed).not.toBe(unsigned);
  return signXml(changed, credentials);
}

/** Replaces the QR Code text (infNFeSupl is outside the signed infNFe: no re-signing needed). */
function withQr(signed: string, change: (qr: string) => string): string {
  return signed.replace(/<qrCode>([^<]*)<\/qrCode>/, (_, qr: string) => `<qrCode>${change(qr)}</qrCode>`);
}

// ---------------------------------------------------------------------------------------------

describe('fact readers (pure)', () => {
  it('reads what the rules judge from a signed NFC-e', () => {
    const doc = issue(1, { pag: [{ tPag: '03', vPag: '100.00', card: { tpIntegra: '1', CNPJ: CNPJ_B, cAut: 'AUT123' } }], dest: { cpf: '52998224725' } });
    const f = readNfeFacts(doc.xml);
    expect(f.id).toBe(`NFe${doc.key}`);
    expect(f).toMatchObject({ cUF: '35', mod: '65', serie: '1', nNF: '1', tpEmis: '1', tpAmb: '2', emitCnpj: CNPJ_A, vNF: '100.00' });
    expect(f.firstXProd).toBe(HOMOLOGACAO_XPROD);
    expect(f.dest).toEqual({ xNome: HOMOLOGACAO_DEST_XNOME, idTag: 'CPF', id: '52998224725' });
    expect(f.payments).toEqual([{ tPag: '03', card: { tpIntegra: '1', CNPJ: CNPJ_B, cAut: 'AUT123' } }]);
    expect(f.qrCode).toBe(doc.qrCode);
    expect(f.digestValue).toBe(doc.digestValue);
  });

  it('reads what the rules judge from a signed MDF-e (QR unescaped, route in order)', () => {
    const doc = issueMdfe(manifest(1, 'ABC1D23'), { emitter: emitterA, dhEmi: new Date(), credentials: credsA });
    const f = readMdfeFacts(doc.xml);
    expect(f.id).toBe(`MDFe${doc.key}`);
    expect(f).toMatchObject({ tpAmb: '2', mod: '58', nMDF: '1', UFIni: 'SP', UFFim: 'BA', emitCnpj: CNPJ_A, placa: 'ABC1D23' });
    expect(f.UFPer).toEqual(['MG']);
    expect(f.hasProp).toBe(false);
    expect(f.tpTransp).toBeUndefined();
    expect(f.insurance).toEqual([{ xSeg: 'Seguradora Exemplo S.A.', insurerCnpj: CNPJ_B, nApol: 'APOL-2026-001', endorsements: 1 }]);
    expect(f.hasProdPred).toBe(true);
    expect(f.contractors).toBe(1);
    expect(f.qrCode).toBe(doc.qrCode);
    expect(f.qrCode).toContain('&tpAmb=2');
  });

  it('keeps a detailed xMotivo within TString: Latin-1, at most 255 characters', () => {
    const m = motivoWithDetail(NFE.schema.xMotivo, `linha 1: Element ‘{x}nNF’ → ${'x'.repeat(400)}\n`);
    expect([...m].length).toBeLessThanOrEqual(255);
    expect(m).toMatch(/^Rejeição: Falha no Schema XML da NFe \[linha 1: Element '\{x\}nNF' \? x+\.\.\.\]$/);
    expect(motivoWithDetail(NFE.schema.xMotivo, undefined)).toBe(NFE.schema.xMotivo);
  });
});

describe('NFC-e authorization', () => {
  it('authorizes (100) with a 15-digit protocol and a protNFe that makes a valid nfeProc', async () => {
    const doc = issue(10);
    const v = await authority.authorizeNfe(companyA, doc.xml);
    expect(v.cStat).toBe('100');
    expect(v.xMotivo).toBe('Autorizado o uso da NF-e');
    const yy = brasiliaDateTime(new Date()).slice(2, 4);
    expect(v.nProt).toMatch(new RegExp(`^135${yy}[0-9]{10}$`));
    expect(v.receivedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-0[23]:00$/);
    expect(v.protNFe).toContain(`<nProt>${v.nProt}</nProt>`);
    expect(v.protNFe).toContain(`<digVal>${doc.digestValue}</digVal>`);
    const proc = validateXml(wrapNfeProc(doc.xml, v.protNFe), 'procNFe');
    expect(proc.errors).toEqual([]);

    const c = await authority.consultNfe(companyA, doc.key);
    expect(c).toEqual({ found: true, verdict: v, cancelled: false });
  });

  it('answers 217 for an unknown key, and for a key of another company', async () => {
    const doc = issue(11);
    expect(await authority.consultNfe(companyA, doc.key)).toEqual({ found: false, ...NFE.naoConsta });
    await authority.authorizeNfe(companyA, doc.xml);
    expect(await authority.consultNfe(companyB, doc.key)).toMatchObject({ found: false, cStat: '217' });
  });

  it('225: schema failure, with the first schema error in xMotivo (≤ 255)', async () => {
    const doc = issue(12);
    const broken = doc.xml.replace('<natOp>VENDA</natOp>', '');
    const v = await authority.authorizeNfe(companyA, broken);
    expect(v.cStat).toBe('225');
    expect(v.xMotivo).toMatch(/^Rejeição: Falha no Schema XML da NFe \[.+\]$/);
    expect([...v.xMotivo].length).toBeLessThanOrEqual(255);
    expect(v.nProt).toBeUndefined();
    expect(v.protNFe).toContain('<cStat>225</cStat>');

    const garbage = await authority.authorizeNfe(companyA, '<NFe><infNFe>');
    expect(garbage.cStat).toBe('225');
    expect(garbage.protNFe).toBe('');
  });

  it('297: a document changed after signing', async () => {
    const doc = issue(13);
    const v = await authority.authorizeNfe(companyA, doc.xml.replace('<xProd>Produto 2</xProd>', '<xProd>Produto X</xProd>'));
    expect(v).toMatchObject(NFE.assinatura);
  });

  it("213: signed with another company's certificate", async () => {
    const doc = issue(14, {}, { credentials: credsB });
    expect(await authority.authorizeNfe(companyA, doc.xml)).toMatchObject(NFE.certificado);
    // …and a company sending a document of another emitter.
    expect(await authority.authorizeNfe(companyB, issue(15).xml)).toMatchObject(NFE.certificado);
  });

  it('226: a document of a UF other than the authority the company uses', async () => {
    const v = await authority.authorizeNfe({ ...companyA, uf: 'BA' }, issue(16).xml);
    expect(v).toMatchObject(NFE.ufAutorizadora);
  });

  it('502: the Id does not match the fields it is made of', async () => {
    const doc = issue(17);
    const forged = resign(doc.xml, (x) => x.replace('<nNF>17</nNF>', '<nNF>18</nNF>'));
    expect(await authority.authorizeNfe(companyA, forged)).toMatchObject(NFE.chave);
  });

  it('252: homologation document sent to the production environment', async () => {
    const v = await authority.authorizeNfe({ ...companyA, environment: 'producao' }, issue(19).xml);
    expect(v).toMatchObject(NFE.ambiente);
  });

  it('373 and 598: homologation texts; a rejection does not consume the number', async () => {
    const doc = issue(20, { dest: { cpf: '52998224725' } });
    const xProd = resign(doc.xml, (x) => x.replace(HOMOLOGACAO_XPROD, 'Produto 1'));
    expect(await authority.authorizeNfe(companyA, xProd)).toMatchObject(NFE.xProdHomologacao);
    expect(NFE.xProdHomologacao.cStat).toBe('373');
    const dest = resign(doc.xml, (x) => x.replace(`<xNome>${HOMOLOGACAO_DEST_XNOME}</xNome>`, '<xNome>Consumidor</xNome>'));
    expect(await authority.authorizeNfe(companyA, dest)).toMatchObject(NFE.destHomologacao);
    expect(NFE.destHomologacao.cStat).toBe('598');

    expect((await authority.authorizeNfe(companyA, doc.xml)).cStat).toBe('100');
  });

  it('QR Code: 395 (address), 397 (key), 462 (CSC id), 464 (hash)', async () => {
    const doc = issue(21);
    expect(
      await authority.authorizeNfe(
        companyA,
        withQr(doc.xml, (qr) => qr.replace('homologacao.nfce', 'nfce')),
      ),
    ).toMatchObject(NFE.qrUrl);
    const otherKey = issue(22).key;
    expect(
      await authority.authorizeNfe(
        companyA,
        withQr(doc.xml, (qr) => qr.replace(doc.key, otherKey)),
      ),
    ).toMatchObject(NFE.qrChave);
    // (398, a version other than 2/3, cannot get past the schema's QR patterns.)

    const unknownCsc = issue(23, {}, { emitter: { csc: { id: '000002', token: CSC.token } } });
    expect(await authority.authorizeNfe(companyA, unknownCsc.xml)).toMatchObject(NFE.cscDesconhecido);
    const wrongToken = issue(24, {}, { emitter: { csc: { id: CSC.id, token: 'OUTRO-CSC-QUALQUER' } } });
    expect(await authority.authorizeNfe(companyA, wrongToken.xml)).toMatchObject(NFE.qrHash);
    expect(NFE.qrHash.xMotivo).toBe('Rejeição: Código de Hash no QR-Code difere do calculado');

    expect((await authority.authorizeNfe(companyA, doc.xml)).cStat).toBe('100');
  });

  it('391 and 392: card payments without the card group or its integration data', async () => {
    const noCard = issue(25, { pag: [{ tPag: '03', vPag: '100.00' }] });
    expect(await authority.authorizeNfe(companyA, noCard.xml)).toMatchObject({
      cStat: '391',
      xMotivo: 'Rejeição: Não informados os dados do cartão de crédito / débito nas Formas de Pagamento da Nota Fiscal',
    });
    const integrated = issue(26, { pag: [{ tPag: '04', vPag: '100.00', card: { tpIntegra: '1', CNPJ: CNPJ_B } }] });
    expect(await authority.authorizeNfe(companyA, integrated.xml)).toMatchObject({
      cStat: '392',
      xMotivo: 'Rejeição: Não informados os dados da operação de pagamento por cartão de crédito / débito',
    });
    const notIntegrated = issue(27, { pag: [{ tPag: '04', vPag: '100.00', card: { tpIntegra: '2' } }] });
    expect((await authority.authorizeNfe(companyA, notIntegrated.xml)).cStat).toBe('100');
  });

  it('976: a hashCSRT that is not base64(SHA-1(CSRT + chave)) with the CSRT the authority holds, or of another idCSRT', async () => {
    const csrt = { id: 1, token: 'G8063VRTNDMO886SFNK5LDUDEI24XJ22YIPO' };
    const respTec = { cnpj: CNPJ_B, contact: 'Suporte Balcão', email: 'suporte@balcao.dev', phone: '1133334444', csrt };
    const withCsrt: AuthorityCompany = { ...companyA, csrt };
    const good = issue(901, {}, { emitter: { respTec } });
    expect(firstText(good.xml, 'hashCSRT')).toBe(createHash('sha1').update(`${csrt.token}${good.key}`).digest('base64'));
    expect((await authority.authorizeNfe(withCsrt, good.xml)).cStat).toBe('100');
    // The hash of another document's key, signed again: only the hash is wrong.
    const other = issue(902, {}, { emitter: { respTec } });
    const wrongHash = resign(other.xml, (x) => x.replace(/<hashCSRT>[^<]+</, `<hashCSRT>${firstText(good.xml, 'hashCSRT')}<`));
    expect(await authority.authorizeNfe(withCsrt, wrongHash)).toMatchObject({ cStat: '976', xMotivo: 'Rejeição: Hash do CSRT inválido' });
    // Made with a CSRT the authority does not hold for the technical responsible, or under another id.
    const otherToken = issue(903, {}, { emitter: { respTec: { ...respTec, csrt: { id: 1, token: 'OUTRO-CSRT' } } } });
    expect((await authority.authorizeNfe(withCsrt, otherToken.xml)).cStat).toBe('976');
    const otherId = issue(904, {}, { emitter: { respTec: { ...respTec, csrt: { ...csrt, id: 2 } } } });
    expect((await authority.authorizeNfe(withCsrt, otherId.xml)).cStat).toBe('976');
  });

  it('204: the same signed document again, with the protocol of the first', async () => {
    const doc = issue(28);
    const first = await authority.authorizeNfe(companyA, doc.xml);
    const again = await authority.authorizeNfe(companyA, doc.xml);
    expect(again.cStat).toBe('204');
    expect(again.xMotivo).toBe(`Rejeição: Duplicidade de NF-e [nProt:${first.nProt}][dhAut:${first.receivedAt}]`);
    expect(again.nProt).toBeUndefined();
  });

  it('539: the same number under another key', async () => {
    const first = issue(29, {}, { cNF: '10203040' });
    const second = issue(29, {}, { cNF: '50607080' });
    expect(second.key).not.toBe(first.key);
    const v1 = await authority.authorizeNfe(companyA, first.xml);
    const v2 = await authority.authorizeNfe(companyA, second.xml);
    expect(v2.cStat).toBe('539');
    expect(v2.xMotivo).toBe(`Rejeição: Duplicidade de NF-e, com diferença na Chave de Acesso [chNFe:${first.key}][nProt:${v1.nProt}]`);
  });

  it("offline contingency (QR v2): 100 within 24 h, 150 later; a QR whose digVal is not the document's is 464", async () => {
    const doc = issue(30, {}, { offline: true });
    const badDigVal = withQr(doc.xml, (qr) =>
      qr.replace(/\|2\|2\|(\d{2})\|100\.00\|([0-9a-f]{56})\|/, (_m, dia: string, hex: string) => `|2|2|${dia}|100.00|${hex.slice(2)}${hex.slice(0, 2)}|`),
    );
    expect(badDigVal).not.toBe(doc.xml);
    expect(await authority.authorizeNfe(companyA, badDigVal)).toMatchObject(NFE.qrHash);
    expect(await authority.authorizeNfe(companyA, doc.xml)).toMatchObject(NFE.autorizado);

    const late = issue(31, {}, { offline: true });
    advance(companyA.id, 24 * 60 + 5);
    const v = await authority.authorizeNfe(companyA, late.xml);
    expect(v).toMatchObject({ cStat: '150', xMotivo: 'Autorizado o uso da NF-e, autorização fora de prazo' });
    expect(validateXml(wrapNfeProc(late.xml, v.protNFe), 'procNFe').errors).toEqual([]);
  });

  it('703: issued more than 5 minutes after its reception (a PC clock ahead), offline or not; 5 minutes ahead passes', async () => {
    const ahead = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    expect(await authority.authorizeNfe(companyA, issue(40, {}, { dhEmi: ahead(6) }).xml)).toMatchObject(NFE.emissaoPosterior);
    expect(await authority.authorizeNfe(companyA, issue(41, {}, { dhEmi: ahead(180), offline: true }).xml)).toMatchObject({
      cStat: '703',
      xMotivo: 'Rejeição: Data-Hora de Emissão posterior ao horário de recebimento',
    });
    expect(await authority.authorizeNfe(companyA, issue(42, {}, { dhEmi: ahead(4) }).xml)).toMatchObject(NFE.autorizado);
  });

  it('704: a normal NFC-e received more than 5 minutes after its dhEmi; an offline one 26 h late is 150, not 704', async () => {
    const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    expect(await authority.authorizeNfe(companyA, issue(43, {}, { dhEmi: ago(6) }).xml)).toMatchObject({
      cStat: '704',
      xMotivo: 'Rejeição: NFC-e com Data-Hora de emissão atrasada',
    });
    expect(await authority.authorizeNfe(companyA, issue(44, {}, { dhEmi: ago(4) }).xml)).toMatchObject(NFE.autorizado);
    expect(await authority.authorizeNfe(companyA, issue(45, {}, { dhEmi: ago(26 * 60), offline: true }).xml)).toMatchObject(NFE.autorizadoForaDePrazo);
  });

  it('offline contingency (QR v3): the QR signature is checked with the signing certificate (583)', async () => {
    const doc = issue(32, { dest: { cpf: '52998224725' } }, { offline: true, emitter: { qrCodeVersion: 3 } });
    const otherConsumer = withQr(doc.xml, (qr) => qr.replace(/\|2\|52998224725\|/, '|2|11144477735|'));
    expect(otherConsumer).not.toBe(doc.xml);
    expect(await authority.authorizeNfe(companyA, otherConsumer)).toMatchObject(NFE.qrAssinatura);
    const badSignature = withQr(doc.xml, (qr) =>
      qr.replace(/\|([A-Za-z0-9+/]{10})([A-Za-z0-9+/]+={0,2})$/, (_m, a: string, b: string) => `|${a.split('').reverse().join('')}${b}`),
    );
    expect(badSignature).not.toBe(doc.xml);
    expect(await authority.authorizeNfe(companyA, badSignature)).toMatchObject(NFE.qrAssinatura);
    expect(await authority.authorizeNfe(companyA, doc.xml)).toMatchObject(NFE.autorizado);
    const online = issue(33, {}, { emitter: { qrCodeVersion: 3 } });
    expect(await authority.authorizeNfe(companyA, online.xml)).toMatchObject(NFE.autorizado);
    // A consumer with an alphanumeric CNPJ: the QR gives its type without the number, and the
    // authority expects exactly that (docs/fiscal.md, "QR Code").
    const alpha = issue(39, { dest: { cnpj: '12ABC34501DE35' } }, { offline: true, emitter: { qrCodeVersion: 3 } });
    expect(alpha.qrCode).toMatch(/\|1\|\|[A-Za-z0-9+/]+={0,2}$/);
    expect(await authority.authorizeNfe(companyA, alpha.xml)).toMatchObject(NFE.autorizado);
  });

  it('unavailable: throws, and the authority records nothing', async () => {
    const doc = issue(34);
    settings.set(companyA.id, { latencyMs: 0, available: false });
    await expect(authority.authorizeNfe(companyA, doc.xml)).rejects.toBeInstanceOf(AuthorityUnavailableError);
    await expect(authority.consultNfe(companyA, doc.key)).rejects.toBeInstanceOf(AuthorityUnavailableError);
    // Another company is not affected.
    expect((await authority.consultNfe(companyB, doc.key)).found).toBe(false);
    settings.delete(companyA.id);
    expect(await authority.consultNfe(companyA, doc.key)).toMatchObject({ found: false, cStat: '217' });
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM nfe WHERE access_key = ?').get(doc.key)).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it('waits the configured latency (a real timer) before answering', async () => {
    const doc = issue(35);
    settings.set(companyA.id, { latencyMs: 120, available: true });
    const t0 = performance.now();
    const v = await authority.authorizeNfe(companyA, doc.xml);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(115);
    expect(v.cStat).toBe('100');
  });

  it('stamps dhRecbto with the company clock', async () => {
    advance(companyA.id, 90);
    const xml = issue(36).xml;
    const before = Date.now();
    const v = await authority.authorizeNfe(companyA, xml);
    const after = Date.now();
    // Ninety minutes ahead of the moment it answered (dhRecbto has whole seconds).
    expect(Date.parse(v.receivedAt)).toBeGreaterThanOrEqual(before + 90 * 60_000 - 1_000);
    expect(Date.parse(v.receivedAt)).toBeLessThanOrEqual(after + 90 * 60_000);
    expect(v.receivedAt).toBe(brasiliaDateTime(v.receivedAt));
  });

  it('its state survives close and reopen (another system)', async () => {
    const doc = issue(37);
    const v = await authority.authorizeNfe(companyA, doc.xml);
    authority.close();
    await expect(authority.consultNfe(companyA, doc.key)).rejects.toBeInstanceOf(AuthorityUnavailableError);
    authority = new SandboxAuthority(options);
    expect(await authority.consultNfe(companyA, doc.key)).toEqual({ found: true, verdict: v, cancelled: false });
    // The protocol sequence goes on, never repeats.
    const next = await authority.authorizeNfe(companyA, issue(38).xml);
    expect(Number(next.nProt!.slice(5))).toBeGreaterThan(Number(v.nProt!.slice(5)));
  });
});

describe('NFC-e events', () => {
  const author = { cnpj: CNPJ_A, environment: 'homologacao' as const };
  const xJust = 'Venda desfeita a pedido do cliente';

  async function authorized(nNF: number, o: IssueOptions = {}) {
    const doc = issue(nNF, {}, o);
    const v = await authority.authorizeNfe(companyA, doc.xml);
    expect(AUTHORIZED_CODES).toContain(v.cStat);
    return { doc, nProt: v.nProt! };
  }

  it('cancellation (110111) within 30 minutes: 135, the NF-e becomes cancelled; the same event again is 573', async () => {
    const { doc, nProt } = await authorized(100);
    advance(companyA.id, 29);
    const evento = nfeCancellationEvent({ chNFe: doc.key, nProt, xJust, author }, credsA);
    const v = await authority.registerNfeEvent(companyA, evento);
    expect(v).toMatchObject({ cStat: '135', xMotivo: 'Evento registrado e vinculado a NF-e' });
    expect(v.nProt).toMatch(/^135[0-9]{12}$/);
    expect(v.nProt).not.toBe(nProt);
    expect(validateXml(wrapProcEventoNFe(evento, v.retEvento), 'procEventoCancNFe').errors).toEqual([]);
    expect(await authority.consultNfe(companyA, doc.key)).toMatchObject({ found: true, cancelled: true });

    expect(await authority.registerNfeEvent(companyA, evento)).toMatchObject(NFE.eventoDuplicado);
    const second = nfeCancellationEvent({ chNFe: doc.key, nProt, xJust, author, nSeqEvento: 2 }, credsA);
    expect(await authority.registerNfeEvent(companyA, second)).toMatchObject(NFE.cancelamentoDeCancelada);
    // A cancelled NF-e sent again.
    expect(await authority.authorizeNfe(companyA, doc.xml)).toMatchObject(NFE.jaCancelada);
  });

  it('cancellation after 30 minutes: 501', async () => {
    const { doc, nProt } = await authorized(101);
    advance(companyA.id, 31);
    const v = await authority.registerNfeEvent(companyA, nfeCancellationEvent({ chNFe: doc.key, nProt, xJust, author }, credsA));
    expect(v).toMatchObject({ cStat: '501', xMotivo: 'Rejeição: Prazo de cancelamento superior ao previsto na Legislação' });
    expect(await authority.consultNfe(companyA, doc.key)).toMatchObject({ cancelled: false });
  });

  it('580 (not authorized here), 222 (wrong protocol), 297, 213', async () => {
    const never = issue(102);
    const nProtAny = '135260000000001';
    expect(await authority.registerNfeEvent(companyA, nfeCancellationEvent({ chNFe: never.key, nProt: nProtAny, xJust, author }, credsA))).toMatchObject(
      NFE.eventoExigeAutorizada,
    );

    const { doc, nProt } = await authorized(103);
    const wrong = String(Number(nProt) + 1);
    expect(await authority.registerNfeEvent(companyA, nfeCancellationEvent({ chNFe: doc.key, nProt: wrong, xJust, author }, credsA))).toMatchObject(
      NFE.protocoloDiferente,
    );
    const evento = nfeCancellationEvent({ chNFe: doc.key, nProt, xJust, author }, credsA);
    expect(await authority.registerNfeEvent(companyA, evento.replace(xJust, 'Venda desfeita a pedido do gerente'))).toMatchObject(NFE.assinatura);
    const byB = nfeCancellationEvent({ chNFe: doc.key, nProt, xJust, author }, credsB);
    expect(await authority.registerNfeEvent(companyA, byB)).toMatchObject(NFE.certificado);
    // Another company cannot see (let alone cancel) it.
    const other = nfeCancellationEvent({ chNFe: doc.key, nProt, xJust, author: { cnpj: CNPJ_B, environment: 'homologacao' } }, credsB);
    expect(await authority.registerNfeEvent(companyB, other)).toMatchObject(NFE.eventoExigeAutorizada);
  });

  it('cancellation by substitution (110112): within 168 h, by the contingency NFC-e that replaced it', async () => {
    const original = await authorized(110);
    const substitute = await authorized(111, { offline: true });
    advance(companyA.id, 120); // past the 30 minutes of the ordinary cancellation
    expect(
      await authority.registerNfeEvent(companyA, nfeCancellationEvent({ chNFe: original.doc.key, nProt: original.nProt, xJust, author }, credsA)),
    ).toMatchObject(NFE.prazoCancelamento);

    const subst = (chNFeRef: string) =>
      nfeSubstitutionCancellationEvent({ chNFe: original.doc.key, nProt: original.nProt, xJust, author, chNFeRef, verAplic: 'Balcao 0.1.0' }, credsA);
    const normal = await authorized(112);
    expect(await authority.registerNfeEvent(companyA, subst(normal.doc.key))).toMatchObject(NFE.substituicaoTpEmis);
    const neverSent = issue(113, {}, { offline: true });
    expect(await authority.registerNfeEvent(companyA, subst(neverSent.key))).toMatchObject(NFE.substitutaInexistente);

    const evento = subst(substitute.doc.key);
    const v = await authority.registerNfeEvent(companyA, evento);
    expect(v.cStat).toBe('135');
    expect(validateXml(wrapProcEventoNFe(evento, v.retEvento), 'procEventoCancSubst').errors).toEqual([]);
    expect(await authority.consultNfe(companyA, original.doc.key)).toMatchObject({ found: true, cancelled: true });
    expect(await authority.consultNfe(companyA, substitute.doc.key)).toMatchObject({ found: true, cancelled: false });
  });

  it('cancellation by substitution after 168 hours: 501', async () => {
    const original = await authorized(114);
    const substitute = await authorized(115, { offline: true });
    advance(companyA.id, 168 * 60 + 1);
    const evento = nfeSubstitutionCancellationEvent(
      { chNFe: original.doc.key, nProt: original.nProt, xJust, author, chNFeRef: substitute.doc.key, verAplic: 'Balcao 0.1.0' },
      credsA,
    );
    expect(await authority.registerNfeEvent(companyA, evento)).toMatchObject(NFE.prazoCancelamento);
  });
});

const AUTHORIZED_CODES = ['100', '150'];

describe('inutilização', () => {
  const inut = (nNFIni: number, nNFFin: number, serie = 1) =>
    buildInutilizacao(
      { emitter: emitterA, ano: new Date().getFullYear(), serie, nNFIni, nNFFin, xJust: 'Numeracao pulada por falha no sistema', model: '65' },
      credsA,
    );

  it('102 for a range never used; the numbers can no longer be authorized (206)', async () => {
    const signed = inut(500, 510);
    const v = await authority.voidNfeNumbers(companyA, signed);
    expect(v).toMatchObject({ cStat: '102', xMotivo: 'Inutilização de número homologado' });
    expect(v.nProt).toMatch(/^135[0-9]{12}$/);
    expect(validateXml(wrapProcInutNFe(signed, v.retInutNFe), 'procInutNFe').errors).toEqual([]);
    expect(await authority.authorizeNfe(companyA, issue(505).xml)).toMatchObject(NFE.numeroInutilizado);
    // Same range again: 563; an overlapping one: 256; another series is independent.
    expect(await authority.voidNfeNumbers(companyA, signed)).toMatchObject(NFE.mesmaFaixa);
    expect(await authority.voidNfeNumbers(companyA, inut(510, 520))).toMatchObject(NFE.faixaJaInutilizada);
    expect((await authority.voidNfeNumbers(companyA, inut(500, 510, 2))).cStat).toBe('102');
  });

  it('241 for a range holding an authorized number', async () => {
    await authority.authorizeNfe(companyA, issue(605).xml);
    expect(await authority.voidNfeNumbers(companyA, inut(600, 610))).toMatchObject({
      cStat: '241',
      xMotivo: 'Rejeição: Um número da faixa já foi utilizado',
    });
    expect((await authority.voidNfeNumbers(companyA, inut(606, 610))).cStat).toBe('102');
  });

  it("213 for a range signed with another company's certificate", async () => {
    const signed = buildInutilizacao(
      { emitter: emitterA, ano: 26, serie: 1, nNFIni: 700, nNFFin: 700, xJust: 'Numeracao pulada por falha no sistema', model: '65' },
      credsB,
    );
    expect(await authority.voidNfeNumbers(companyA, signed)).toMatchObject(NFE.certificado);
  });
});

// ---------------------------------------------------------------------------------------------
// MDF-e

const cteBody = '35261111222333000181570010000001231' + '12345679';
const CTE_KEY = cteBody + checkDigit(cteBody);

/** Own fleet, SP → BA through MG, every group the authority requires. */
function manifest(nMDF: number, placa: string): MdfeRequest {
  return {
    ide: {
      nMDF,
      serie: 1,
      modal: '1',
      tpEmit: '1',
      UFIni: 'SP',
      UFFim: 'BA',
      infMunCarrega: [{ cMunCarrega: '3550308', xMunCarrega: 'São Paulo' }],
      infPercurso: [{ UFPer: 'MG' }],
    },
    rodo: {
      RNTRC: '12345678',
      veicTracao: { placa, UF: 'SP', tara: '9000', condutor: { xNome: 'João da Silva', CPF: '52998224725' }, tpRod: '03', tpCar: '02' },
      infContratante: [{ xNome: 'Comércio Contratante Ltda', CNPJ: CNPJ_B }],
      infPag: [
        {
          xNome: 'Comércio Contratante Ltda',
          CNPJ: CNPJ_B,
          Comp: [{ tpComp: '04', vComp: 3500 }],
          vContrato: 3500,
          indPag: '0',
          infBanc: { PIX: 'financeiro@contratante.com.br' },
        },
      ],
    },
    infDoc: { infMunDescarga: [{ cMunDescarga: '2927408', xMunDescarga: 'Salvador', infCTe: [{ chCTe: CTE_KEY }] }] },
    seg: { respSeg: '1', xSeg: 'Seguradora Exemplo S.A.', seg_CNPJ: CNPJ_B, nApol: 'APOL-2026-001', nAver: 'AVB-000123' },
    prodPred: { tpCarga: '05', xProd: 'Eletrodomésticos', NCM: '84181000' },
    tot: { vCarga: 150000, cUnid: '01', qCarga: 12500 },
  };
}

const signMdfe = (r: MdfeRequest) => issueMdfe(r, { emitter: emitterA, dhEmi: new Date(), credentials: credsA });

describe('MDF-e', () => {
  const author = { cnpj: CNPJ_A, environment: 'homologacao' as const };
  const xJust = 'Viagem cancelada pelo contratante';

  async function authorized(nMDF: number, placa: string) {
    const doc = signMdfe(manifest(nMDF, placa));
    const v = await authority.authorizeMdfe(companyA, doc.xml);
    expect(v.cStat).toBe('100');
    return { doc, nProt: v.nProt! };
  }

  const close = (key: string, nProt: string, over: { dtEnc?: string; cMun?: string } = {}) =>
    mdfeClosingEvent({ chMDFe: key, nProt, UF: 'BA', cMun: over.cMun ?? '2927408', dtEnc: over.dtEnc, author }, credsA);
  const cancel = (key: string, nProt: string) => mdfeCancellationEvent({ chMDFe: key, nProt, xJust, author }, credsA);

  it('authorizes (100): protMDFe makes a valid mdfeProc; consultation shows it authorized', async () => {
    const doc = signMdfe(manifest(1, 'AAA1A11'));
    const v = await authority.authorizeMdfe(companyA, doc.xml);
    expect(v).toMatchObject({ cStat: '100', xMotivo: 'Autorizado o uso do MDF-e' });
    expect(v.nProt).toMatch(/^135[0-9]{12}$/);
    expect(validateXml(wrapMdfeProc(doc.xml, v.protMDFe), 'procMDFe').errors).toEqual([]);
    expect(await authority.consultMdfe(companyA, doc.key)).toEqual({ found: true, verdict: v, state: 'autorizado' });
    expect(await authority.consultMdfe(companyB, doc.key)).toEqual({ found: false, ...MDFE.naoConsta });
  });

  // The rules of docs/api.md, "MDF-e" in their order; each mutation breaks one of them.
  const breakers: [string, (r: MdfeRequest) => void][] = [
    ['745', (r) => (r.tpTransp = '1')],
    ['699', (r) => delete (r.seg as { nAver?: string }).nAver],
    ['698', (r) => delete r.seg],
    ['725', (r) => delete r.prodPred],
    ['578', (r) => delete r.rodo.infContratante],
    ['663', (r) => (r.ide.infPercurso = [{ UFPer: 'GO' }])],
  ];

  it.each(breakers.map(([code], i) => [code, i] as const))('content rule %s, alone', async (code, i) => {
    const r = manifest(10 + i, 'BBB2B22');
    breakers[i]![1](r);
    const v = await authority.authorizeMdfe(companyA, signMdfe(r).xml);
    expect(v.cStat).toBe(code);
    expect(v.xMotivo).toMatch(/^Rejeição: /);
    expect(v.protMDFe).toContain(`<cStat>${code}</cStat>`);
  });

  it('a manifest breaking several rules gets the first in the contract order', async () => {
    // Rule i broken together with every later one: the answer is always rule i. (Removing seg,
    // 698, would hide an incomplete seg, 699, so that pair is not combined.)
    for (let i = 0; i < breakers.length; i++) {
      const r = manifest(20 + i, 'CCC3C33');
      breakers.forEach(([, mutate], j) => {
        if (j >= i && !(i === 1 && j === 2)) mutate(r);
      });
      expect((await authority.authorizeMdfe(companyA, signMdfe(r).xml)).cStat).toBe(breakers[i]![0]);
    }
    const r = manifest(30, 'CCC3C33');
    r.tpTransp = '1';
    r.ide.infPercurso = [];
    expect(await authority.authorizeMdfe(companyA, signMdfe(r).xml)).toMatchObject(MDFE.tpTranspSemProp);
    const p = manifest(31, 'CCC3C33');
    delete p.rodo.infContratante;
    p.ide.infPercurso = [{ UFPer: 'RJ' }];
    expect((await authority.authorizeMdfe(companyA, signMdfe(p).xml)).cStat).toBe('578');
  });

  it('745 also for a third-party owner (prop) without tpTransp; both together are accepted', async () => {
    const r = manifest(40, 'DDD4D44');
    r.rodo.veicTracao.prop = { CPF: '11144477735', RNTRC: '87654321', xNome: 'Pedro Caminhoneiro', UF: 'MG', tpProp: '1' };
    expect(await authority.authorizeMdfe(companyA, signMdfe(r).xml)).toMatchObject(MDFE.propSemTpTransp);
    r.tpTransp = '2';
    expect((await authority.authorizeMdfe(companyA, signMdfe(r).xml)).cStat).toBe('100');
  });

  it('611 while the plate has an open manifest (its own number re-sent included: 611 before 204); accepted after closing it; 204 for a number already authorized', async () => {
    const first = await authorized(50, 'EEE5E55');
    const second = signMdfe(manifest(51, 'EEE5E55'));
    const blocked = await authority.authorizeMdfe(companyA, second.xml);
    expect(blocked.cStat).toBe('611');
    expect(blocked.xMotivo).toBe(`${MDFE.naoEncerrado.xMotivo} [chMDFe:${first.doc.key}]`);

    // Re-sending the open manifest itself breaks both rules: 611 comes before 204.
    expect(await authority.authorizeMdfe(companyA, first.doc.xml)).toMatchObject({
      cStat: '611',
      xMotivo: `${MDFE.naoEncerrado.xMotivo} [chMDFe:${first.doc.key}]`,
    });

    const closing = close(first.doc.key, first.nProt);
    const closed = await authority.registerMdfeEvent(companyA, closing);
    expect(closed).toMatchObject({ cStat: '135', xMotivo: 'Evento registrado e vinculado a MDF-e' });
    expect(validateXml(wrapProcEventoMDFe(closing, closed.retEvento), 'procEventoMDFe').errors).toEqual([]);
    expect(await authority.consultMdfe(companyA, first.doc.key)).toMatchObject({ found: true, state: 'encerrado' });

    // Closed, the first is only a duplicate now: 204.
    expect(await authority.authorizeMdfe(companyA, first.doc.xml)).toMatchObject(MDFE.duplicidade);
    expect((await authority.authorizeMdfe(companyA, second.xml)).cStat).toBe('100');
    // Same number, another key (another cMDF): still 204.
    const sameNumber = issueMdfe(manifest(50, 'FFF6F66'), { emitter: emitterA, dhEmi: new Date(), credentials: credsA });
    expect(sameNumber.key).not.toBe(first.doc.key);
    expect(await authority.authorizeMdfe(companyA, sameNumber.xml)).toMatchObject({ cStat: '204', xMotivo: 'Rejeição: Duplicidade de MDF-e' });
  });

  it('cancellation (110111) within 24 h: 135, cancelled, the plate is free again', async () => {
    const m = await authorized(60, 'GGG7G77');
    advance(companyA.id, 23 * 60);
    const evento = cancel(m.doc.key, m.nProt);
    const v = await authority.registerMdfeEvent(companyA, evento);
    expect(v.cStat).toBe('135');
    expect(validateXml(wrapProcEventoMDFe(evento, v.retEvento), 'procEventoMDFe').errors).toEqual([]);
    expect(await authority.consultMdfe(companyA, m.doc.key)).toMatchObject({ state: 'cancelado' });
    expect(await authority.registerMdfeEvent(companyA, evento)).toMatchObject(MDFE.jaCancelado);
    expect(await authority.registerMdfeEvent(companyA, close(m.doc.key, m.nProt))).toMatchObject(MDFE.jaCancelado);
    expect((await authority.authorizeMdfe(companyA, signMdfe(manifest(61, 'GGG7G77')).xml)).cStat).toBe('100');
  });

  it('cancellation after 24 h: 220', async () => {
    const m = await authorized(62, 'HHH8H88');
    advance(companyA.id, 24 * 60 + 1);
    expect(await authority.registerMdfeEvent(companyA, cancel(m.doc.key, m.nProt))).toMatchObject({
      cStat: '220',
      xMotivo: 'Rejeição: MDF-e autorizado há mais de 24 horas',
    });
  });

  it('a closed manifest cannot be cancelled nor closed again (609)', async () => {
    const m = await authorized(63, 'III9I99');
    expect((await authority.registerMdfeEvent(companyA, close(m.doc.key, m.nProt))).cStat).toBe('135');
    expect(await authority.registerMdfeEvent(companyA, cancel(m.doc.key, m.nProt))).toMatchObject(MDFE.jaEncerrado);
    expect(await authority.registerMdfeEvent(companyA, close(m.doc.key, m.nProt))).toMatchObject({
      cStat: '609',
      xMotivo: 'Rejeição: MDF-e já encerrado',
    });
  });

  it('closing: 614 (municipality of another UF), 615 (before the authorization date), 222 (protocol)', async () => {
    const m = await authorized(64, 'JJJ1J11');
    const foreignTown = resign(close(m.doc.key, m.nProt), (x) => x.replace('<cMun>2927408</cMun>', '<cMun>3550308</cMun>'));
    expect(await authority.registerMdfeEvent(companyA, foreignTown)).toMatchObject(MDFE.municipioForaDaUf);
    expect(await authority.registerMdfeEvent(companyA, close(m.doc.key, m.nProt, { dtEnc: '2020-01-01' }))).toMatchObject(MDFE.encerramentoAntesDaAutorizacao);
    expect(await authority.registerMdfeEvent(companyA, close(m.doc.key, String(Number(m.nProt) + 1)))).toMatchObject(MDFE.protocoloDiferente);
    expect(await authority.consultMdfe(companyA, m.doc.key)).toMatchObject({ state: 'autorizado' });
  });

  it('rejects 297 (changed after signing), 213 (another certificate), 481 (QR of another key)', async () => {
    const doc = signMdfe(manifest(70, 'KKK2K22'));
    expect(await authority.authorizeMdfe(companyA, doc.xml.replace('Eletrodomésticos', 'Eletrodomésticas'))).toMatchObject(MDFE.assinatura);
    const byB = issueMdfe(manifest(71, 'KKK2K22'), { emitter: emitterA, dhEmi: new Date(), credentials: credsB });
    expect(await authority.authorizeMdfe(companyA, byB.xml)).toMatchObject(MDFE.certificado);
    const otherKey = buildAccessKey({ ...keyParts(doc.key), number: 999 });
    const qr = doc.xml.replace(`chMDFe=${doc.key}`, `chMDFe=${otherKey}`);
    expect(await authority.authorizeMdfe(companyA, qr)).toMatchObject(MDFE.qrChave);
    expect((await authority.authorizeMdfe(companyA, doc.xml)).cStat).toBe('100');
  });

  it('unavailable: throws and changes nothing', async () => {
    const doc = signMdfe(manifest(80, 'LLL3L33'));
    settings.set(companyA.id, { latencyMs: 0, available: false });
    await expect(authority.authorizeMdfe(companyA, doc.xml)).rejects.toBeInstanceOf(AuthorityUnavailableError);
    settings.delete(companyA.id);
    expect(await authority.consultMdfe(companyA, doc.key)).toMatchObject({ found: false, cStat: '217' });
  });
});

function keyParts(key: string) {
  return {
    cUF: key.slice(0, 2),
    yearMonth: key.slice(2, 6),
    cnpj: key.slice(6, 20),
    model: key.slice(20, 22) as '58',
    serie: Number(key.slice(22, 25)),
    number: Number(key.slice(25, 34)),
    tpEmis: Number(key[34]),
    code: key.slice(35, 43),
  };
}
