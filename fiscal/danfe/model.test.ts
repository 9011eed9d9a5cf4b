import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatAccessKey } from '../access-key.ts';
import { generateTestCertificate } from '../certificate.ts';
import type { Emitter } from '../company.ts';
import { FieldError } from '../errors.ts';
import { formatBRL, fromCents } from '../money.ts';
import { issueNfce, type IssuedNfce } from '../nfce/build.ts';
import type { NfceRequest } from '../nfce/types.ts';
import { nfeProtocolFor, wrapNfeProc } from '../protocol.ts';
import { demoEmitter, sampleNfceRequest } from '../samples.ts';
import { fixturePath } from '../testdata/fixtures.ts';
import type { SigningCredentials } from '../signature.ts';
import { danfeModel, danfeTexts, formatDecimalBR, type DanfeLine, type DanfeModel } from './model.ts';

let credentials: SigningCredentials;
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'DANFE TESTE' }).certificate;
});

const DH_EMI = '2026-03-10T14:03:05-03:00';
const authorize = (nfe: IssuedNfce, cStat = 100): string =>
  wrapNfeProc(
    nfe.xml,
    nfeProtocolFor(nfe.xml, {
      cStat,
      xMotivo: cStat === 100 ? 'Autorizado o uso da NF-e' : 'Uso Denegado: Irregularidade fiscal do emitente',
      verAplic: 'SP_NFCE_PL009_V4',
      dhRecbto: '2026-03-10T14:03:07-03:00',
      nProt: '135260000012345',
    }),
  );

function issue(edit: (r: NfceRequest) => void = () => {}, opts: { emitter?: Emitter; tpEmis?: 1 | 9; dhEmi?: string } = {}): IssuedNfce {
  const req = sampleNfceRequest({ nNF: 123, items: 3 });
  req.pag = [{ tPag: '01', vPag: '120.00' }];
  edit(req);
  return issueNfce(req, {
    emitter: opts.emitter ?? demoEmitter(),
    dhEmi: opts.dhEmi ?? DH_EMI,
    tpEmis: opts.tpEmis ?? 1,
    credentials,
    ...(opts.tpEmis === 9 ? { contingency: { dhCont: '2026-03-10T14:00:00-03:00', xJust: 'Sem conexão com a SEFAZ no momento' } } : {}),
  });
}

const lines = (m: DanfeModel, id: string): DanfeLine[] => m.divisions.find((d) => d.id === id)?.lines ?? [];
const pairs = (m: DanfeModel, id: string): [string, string][] =>
  lines(m, id).flatMap((l) => (l.kind === 'pair' ? [[l.label, l.value] as [string, string]] : []));
const texts = (m: DanfeModel, id: string): string[] => lines(m, id).flatMap((l) => (l.kind === 'text' ? [l.text] : []));

describe('danfeModel: authorized NFC-e (nfeProc), homologação, cash with change, CPF consumer', () => {
  let nfe: IssuedNfce;
  let m: DanfeModel;
  beforeAll(() => {
    nfe = issue((r) => {
      r.dest = { cpf: '52998224725' };
      r.infCpl = 'Obrigado pela preferência!;Volte sempre';
    });
    m = danfeModel(authorize(nfe));
  });

  it('has the divisions in the manual order', () => {
    expect(m.divisions.map((d) => d.id)).toEqual([
      'cabecalho',
      'identificacaoDanfe',
      'itens',
      'totais',
      'pagamentos',
      'tributos',
      'contribuinte',
      'mensagemFiscal',
      'chave',
      'consumidor',
      'qrcode',
    ]);
  });

  it('prints the emitter header with CNPJ and address formatted', () => {
    expect(texts(m, 'cabecalho')).toEqual([
      'MERCADO BALCÃO DEMONSTRAÇÃO LTDA',
      'CNPJ: 11.222.333/0001-81 IE: 123456789012',
      'Rua das Flores, 100, Centro',
      'São Paulo - SP, CEP 01001-000',
      'Fone: (11) 3333-4444',
    ]);
    expect(texts(m, 'identificacaoDanfe')).toEqual(['DANFE NFC-e - Documento Auxiliar da Nota Fiscal de Consumidor Eletrônica']);
  });

  it('lists the items with code, description, quantity, unit, unit value and total in pt-BR', () => {
    const items = lines(m, 'itens').flatMap((l) => (l.kind === 'item' ? [l.item] : []));
    expect(items).toHaveLength(3);
    // Homologação: the builder replaced item 1's description with the mandatory text.
    expect(items[0]!.description).toBe('NOTA FISCAL EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL');
    expect(items[1]).toEqual({ number: '002', code: '1002', description: 'Açúcar refinado 1kg', quantity: '2', unit: 'UN', unitValue: '4,79', total: '9,58' });
    expect(items[2]).toMatchObject({ number: '003', quantity: '3', unitValue: '27,45', total: '82,35' });
  });

  it('totals, payments with their table names and the change', () => {
    expect(pairs(m, 'totais')).toEqual([
      ['Qtde. total de itens', '3'],
      ['Valor total R$', '110,83'],
      ['Valor a Pagar R$', '110,83'],
    ]);
    expect(pairs(m, 'pagamentos')).toEqual([
      ['FORMA DE PAGAMENTO', 'VALOR PAGO R$'],
      ['Dinheiro', '120,00'],
      ['Troco R$', '9,17'],
    ]);
    expect(m.isCash).toBe(true);
    expect(m.total).toBe('110,83');
  });

  it('taxes (Lei 12.741/2012) and the contributor message split at ";"', () => {
    expect(texts(m, 'tributos')).toEqual(['Tributos Totais Incidentes (Lei Federal 12.741/2012): R$ 4,43']);
    expect(texts(m, 'contribuinte')).toEqual(['Obrigado pela preferência!', 'Volte sempre']);
  });

  it('fiscal message, identification, access-key query and the key in 11 groups of 4', () => {
    expect(texts(m, 'mensagemFiscal')).toEqual(['EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO - SEM VALOR FISCAL', 'NFC-e nº 000000123 Série 001 10/03/2026 14:03:05']);
    expect(texts(m, 'chave')).toEqual([
      'Consulte pela Chave de Acesso em',
      'https://www.homologacao.nfce.fazenda.sp.gov.br/NFCeConsultaPublica',
      'CHAVE DE ACESSO',
    ]);
    const key = lines(m, 'chave').find((l) => l.kind === 'key');
    expect(key?.kind === 'key' && key.groups).toHaveLength(11);
    expect(key?.kind === 'key' && key.groups.every((g) => /^[0-9]{4}$/.test(g))).toBe(true);
    expect(m.keyFormatted).toBe(formatAccessKey(nfe.key));
  });

  it('consumer by CPF, QR payload equal to the XML, protocol and authorization date', () => {
    expect(texts(m, 'consumidor')[0]).toBe('CONSUMIDOR - CPF 529.982.247-25');
    const qr = lines(m, 'qrcode');
    expect(qr.find((l) => l.kind === 'qrcode')).toEqual({ kind: 'qrcode', payload: nfe.qrCode });
    expect(m.qrCode).toBe(nfe.qrCode);
    expect(texts(m, 'qrcode')).toEqual([
      'Consulta via leitor de QR Code',
      'Protocolo de Autorização: 135260000012345',
      'Data de Autorização: 10/03/2026 14:03:07',
    ]);
    expect(m.authorization).toEqual({ protocol: '135260000012345', at: '10/03/2026 14:03:07' });
  });

  it('is not a contingency receipt: no contingency texts, a single unlabelled copy', () => {
    const all = danfeTexts(m).join('\n');
    expect(all).not.toContain('CONTINGÊNCIA');
    expect(all).not.toContain('Pendente');
    expect(m.copies).toEqual([]);
    expect(m.pendingAuthorization).toBe(false);
  });

  it('is plain data (survives JSON, for the screen)', () => {
    expect(JSON.parse(JSON.stringify(m))).toEqual(m);
  });
});

describe('danfeModel: contingency (tpEmis 9)', () => {
  it('pending authorization: banners, two labelled copies, no protocol lines', () => {
    const nfe = issue(() => {}, { tpEmis: 9 });
    const m = danfeModel(nfe.xml);
    expect(m.contingency).toBe(true);
    expect(m.pendingAuthorization).toBe(true);
    expect(texts(m, 'mensagemFiscal')).toEqual(
      expect.arrayContaining(['EMITIDA EM CONTINGÊNCIA', 'Pendente de autorização', 'EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO - SEM VALOR FISCAL']),
    );
    expect(lines(m, 'mensagemFiscal').some((l) => l.kind === 'copy')).toBe(true);
    expect(m.copies).toEqual(['consumidor', 'estabelecimento']);
    expect(danfeTexts(m).join('\n')).not.toContain('Protocolo de Autorização');
    expect(m.authorization).toBeUndefined();
    expect(m.qrCode).toBe(nfe.qrCode);
    expect(m.qrCode).toMatch(/\?p=[0-9]{34}9[0-9]{9}\|2\|2\|10\|110\.83\|/);
  });

  it('asked for one copy, prints only that one', () => {
    const m = danfeModel(issue(() => {}, { tpEmis: 9 }).xml, { copy: 'estabelecimento' });
    expect(m.copies).toEqual(['estabelecimento']);
  });

  it('once authorized, prints as an authorized receipt with its protocol', () => {
    const m = danfeModel(authorize(issue(() => {}, { tpEmis: 9 })));
    expect(m.contingency).toBe(true);
    expect(m.pendingAuthorization).toBe(false);
    expect(m.copies).toEqual([]);
    expect(danfeTexts(m)).toContain('Protocolo de Autorização: 135260000012345');
    expect(danfeTexts(m)).not.toContain('Pendente de autorização');
  });
});

describe('danfeModel: variants', () => {
  it('authorized with an alert (cStat 120, NT 2026.002) prints as authorized; the alert is not for the consumer; the layout and the Lei 12.741 line stay', () => {
    // A regime-normal receipt: it carries the IBS/CBS groups, which the DANFE NFC-e does not show.
    const nfe = issue((r) => r.det.forEach((d) => (d.imposto = { ICMS: { ICMS40: { orig: '0', CST: '40' } } })), {
      emitter: demoEmitter({ crt: 3 }),
      tpEmis: 9,
    });
    expect(nfe.xml).toContain('<IBSCBSTot>');
    const proc = wrapNfeProc(
      nfe.xml,
      nfeProtocolFor(nfe.xml, {
        cStat: '120',
        xMotivo: 'Autorizado o uso da NF-e com alerta',
        verAplic: 'SANDBOX',
        dhRecbto: '2026-03-10T14:03:07-03:00',
        nProt: '135260000012345',
        message: { cMsg: '1115', xMsg: 'IBS/CBS não informado [nItem:1]' },
      }),
    );
    const m = danfeModel(proc);
    expect(m.authorization).toEqual({ protocol: '135260000012345', at: '10/03/2026 14:03:07' });
    expect(m.pendingAuthorization).toBe(false);
    const text = danfeTexts(m).join('\n');
    expect(text).toContain('Protocolo de Autorização: 135260000012345');
    expect(text).not.toMatch(/IBS|CBS|alerta/);
    expect(text).toMatch(/Lei Federal 12\.741|Lei 12\.741/);
  });

  it('a protocol that is not an authorization (denied) prints no authorization lines', () => {
    const m = danfeModel(authorize(issue(), 302));
    expect(m.authorization).toBeUndefined();
    expect(danfeTexts(m).join('\n')).not.toContain('Protocolo de Autorização');
  });

  it('card payment: table name, no change, no drawer', () => {
    const m = danfeModel(issue((r) => (r.pag = [{ tPag: '03', vPag: '110.83', card: { tpIntegra: '2', tBand: '01' } }])).xml);
    expect(pairs(m, 'pagamentos')).toEqual([
      ['FORMA DE PAGAMENTO', 'VALOR PAGO R$'],
      ['Cartão de Crédito', '110,83'],
    ]);
    expect(m.isCash).toBe(false);
  });

  it('any cash part opens the drawer; PIX and "Outros" use their names', () => {
    const m = danfeModel(
      issue(
        (r) =>
          (r.pag = [
            { tPag: '17', vPag: '50.00', card: { tpIntegra: '2' } },
            { tPag: '99', xPag: 'Vale da casa', vPag: '10.00' },
            { tPag: '01', vPag: '60.00' },
          ]),
      ).xml,
    );
    expect(pairs(m, 'pagamentos').slice(1)).toEqual([
      ['Pagamento Instantâneo (PIX) – Dinâmico', '50,00'],
      ['Outros - Vale da casa', '10,00'],
      ['Dinheiro', '60,00'],
      ['Troco R$', '9,17'],
    ]);
    expect(m.isCash).toBe(true);
  });

  it('PIX Automático (23) and TEF Book Transfer (24), in force from 2026-05-04, by their official names', () => {
    const split = (r: NfceRequest) =>
      (r.pag = [
        { tPag: '23', vPag: '55.42' },
        { tPag: '24', vPag: '55.41' },
      ]);
    const m = danfeModel(issue(split, { dhEmi: '2026-05-04T10:00:00-03:00' }).xml);
    expect(pairs(m, 'pagamentos').slice(1, 3)).toEqual([
      ['Pagamento Instantâneo (PIX) – Automático', '55,42'],
      ['Transferência Eletrônica de Fundos (TEF) – Book Transfer', '55,41'],
    ]);
  });

  it('consumer not identified, or identified by CNPJ', () => {
    expect(texts(danfeModel(issue().xml), 'consumidor')).toEqual(['CONSUMIDOR NÃO IDENTIFICADO']);
    expect(texts(danfeModel(issue((r) => (r.dest = { cnpj: '11444777000161' })).xml), 'consumidor')[0]).toBe('CONSUMIDOR - CNPJ 11.444.777/0001-61');
  });

  it('produção: no homologação banner, the first item keeps its description', () => {
    const m = danfeModel(issue(() => {}, { emitter: demoEmitter({ environment: 'producao' }) }).xml);
    expect(m.environment).toBe('producao');
    expect(danfeTexts(m).join('\n')).not.toContain('HOMOLOGAÇÃO');
    const first = lines(m, 'itens').find((l) => l.kind === 'item');
    expect(first?.kind === 'item' && first.item.description).toBe('Café torrado e moído 500g');
  });

  it('item and total discounts, fractional quantities, escaped names', () => {
    const nfe = issue(
      (r) => {
        const p = r.det[1]!.prod;
        p.vDesc = '0.58';
        const bread = r.det[2]!.prod;
        Object.assign(bread, {
          xProd: 'Pão francês & cia',
          uCom: 'KG',
          uTrib: 'KG',
          qCom: '0.750',
          qTrib: '0.750',
          vUnCom: '14.90',
          vUnTrib: '14.90',
          vProd: '11.18',
        });
        const vProd = 1890n + 958n + 1118n; // cents
        r.total = { vProd: fromCents(vProd), vDesc: '0.58', vNF: fromCents(vProd - 58n) };
        r.pag = [{ tPag: '01', vPag: fromCents(vProd - 58n) }];
      },
      { emitter: demoEmitter({ xNome: 'PADARIA PÃO & CIA LTDA', environment: 'producao' }) },
    );
    const m = danfeModel(nfe.xml);
    expect(texts(m, 'cabecalho')[0]).toBe('PADARIA PÃO & CIA LTDA');
    const items = lines(m, 'itens').flatMap((l) => (l.kind === 'item' ? [l.item] : []));
    expect(items[1]!.discount).toBe('-0,58');
    expect(items[2]).toMatchObject({ description: 'Pão francês & cia', quantity: '0,75', unit: 'KG', unitValue: '14,90', total: '11,18' });
    expect(pairs(m, 'totais')).toEqual([
      ['Qtde. total de itens', '3'],
      ['Valor total R$', '39,66'],
      ['Desconto R$', '-0,58'],
      ['Valor a Pagar R$', '39,08'],
    ]);
    expect(pairs(m, 'pagamentos')).not.toContainEqual(expect.arrayContaining(['Troco R$']));
  });

  it('cancelled reprint: CANCELADA with the event date and protocol, right after the fixed text', () => {
    const m = danfeModel(authorize(issue()), { cancelled: { at: '2026-03-10T15:00:00-03:00', nProt: '135260000099999' } });
    expect(m.divisions.map((d) => d.id).slice(0, 3)).toEqual(['cabecalho', 'identificacaoDanfe', 'cancelamento']);
    expect(lines(m, 'cancelamento')[0]).toMatchObject({ kind: 'text', text: 'CANCELADA', large: true, bold: true });
    expect(texts(m, 'cancelamento').slice(1)).toEqual(['Cancelamento em 10/03/2026 15:00:00', 'Protocolo de Cancelamento: 135260000099999']);
    expect(m.cancelled).toEqual({ protocol: '135260000099999', at: '10/03/2026 15:00:00' });
    expect(() => danfeModel(authorize(issue()), { cancelled: { at: '2026-03-10T15:00:00-03:00', nProt: '12' } })).toThrow(FieldError);
  });
});

describe('danfeModel: documents written by others', () => {
  it('pretty-printed (whitespace between tags), entities, infAdFisco in the fiscal message', () => {
    const m = danfeModel(readFileSync(fixturePath('sped-nfe_exemplo_xml_envia_lote_modelo_65.xml'), 'utf8'));
    expect(m.number).toBe('000000240');
    expect(texts(m, 'cabecalho')).toContain('Venâncio Aires - RS, CEP 95800-000');
    expect(texts(m, 'mensagemFiscal')).toContain('DOCUMENTO EMITIDO POR ME OU EPP OPTANTE PELO SIMPLES NACIONAL. NÃO GERA DIREITO A CRÉDITO.');
    expect(m.qrCode).toBe(
      'https://www.sefaz.rs.gov.br/NFCE/NFCE-COM.aspx?p=43211105730928000145650010000002401717268120|2|2|1|75FFAFF74CF8ABDD0153D4D18E27CE17DE14B83F',
    );
    expect(m.issuedAt).toBe('11/11/2021 18:56:55');
    expect(m.isCash).toBe(true);
  });

  it('a -04:00 dhEmi is printed in Brasília time by default, or in the zone asked for', () => {
    const xml = readFileSync(fixturePath('nfce_tpEmis9_qrV3_offline_signed_testcert.xml'), 'utf8');
    expect(danfeModel(xml).issuedAt).toBe('01/10/2018 08:28:14');
    expect(danfeModel(xml, { timeZone: 'America/Cuiaba' }).issuedAt).toBe('01/10/2018 07:28:14');
    const m = danfeModel(xml);
    expect(m.pendingAuthorization).toBe(true);
    expect(pairs(m, 'pagamentos')[1]).toEqual(['Cartão de Débito', '150,00']);
    expect(texts(m, 'cabecalho')[1]).toBe('CNPJ: 33.657.677/0001-56 IE: 130796832 IM: 8216');
    expect(m.qrCode).toHaveLength(461);
  });

  it('reads a QR Code wrapped in CDATA and a namespace prefix', () => {
    const nfe = issue();
    const cdata = nfe.xml.replace(/<qrCode>([^<]*)<\/qrCode>/, (_, q: string) => `<qrCode><![CDATA[${q.replace(/&amp;/g, '&')}]]></qrCode>`);
    expect(danfeModel(cdata).qrCode).toBe(nfe.qrCode);
    const prefixed = nfe.xml.replace(/<(\/?)([A-Za-z])/g, '<$1nfe:$2');
    expect(danfeModel(prefixed).qrCode).toBe(nfe.qrCode);
  });

  it('refuses what cannot be printed as a DANFE NFC-e', () => {
    const xml = issue().xml;
    expect(() => danfeModel(xml.replace(/<infNFeSupl>.*<\/infNFeSupl>/, ''))).toThrow(/infNFeSupl\/qrCode/);
    expect(() => danfeModel(xml.replace('<mod>65</mod>', '<mod>55</mod>'))).toThrow(/modelo 55/);
    expect(() => danfeModel('<nada/>')).toThrow(FieldError);
    expect(() => danfeModel(xml.replace(/<dhEmi>[^<]*<\/dhEmi>/, '<dhEmi>2026-03-10T14:03:05</dhEmi>'))).toThrow(/dhEmi/);
  });
});

describe('formatDecimalBR', () => {
  it('agrees with formatBRL for every amount in cents', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.nat(8), (cents, extraZeros) => {
        expect(formatDecimalBR(fromCents(cents) + '0'.repeat(extraZeros), 2, 'v')).toBe(formatBRL(cents));
      }),
    );
  });

  it('drops trailing zeros of quantities and keeps significant decimals', () => {
    expect(formatDecimalBR('1.0000', 0, 'q')).toBe('1');
    expect(formatDecimalBR('0.7500', 0, 'q')).toBe('0,75');
    expect(formatDecimalBR('1234.5670', 0, 'q')).toBe('1.234,567');
    expect(formatDecimalBR('0.3333333333', 2, 'v')).toBe('0,3333333333');
    expect(() => formatDecimalBR('1,5', 2, 'v')).toThrow(FieldError);
  });
});
