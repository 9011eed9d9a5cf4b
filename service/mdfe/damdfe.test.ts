// The DAMDFE model read from the XML, for what the HTTP tests' sample does not exercise: a
// third-party vehicle, several drivers, several insurance endorsements, additional information,
// a manifest not yet authorized (no protocol) and the state mark.

import { PDFParse } from 'pdf-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../../fiscal/certificate.ts';
import { issueMdfe } from '../../fiscal/mdfe/build.ts';
import { mdfeProtocolFor, wrapMdfeProc } from '../../fiscal/protocol.ts';
import { demoEmitter, sampleMdfeRequest } from '../../fiscal/samples.ts';
import type { SigningCredentials } from '../../fiscal/signature.ts';
import { generateCnpj } from '@brazilian-utils/brazilian-utils/generate-cnpj';
import { formatCnpj } from '../../base/common/tax-ids.ts';
import { validateXml } from '../../fiscal/schema.ts';
import { keyBarcodeLayout } from '../a4-pdf.ts';
import { damdfeModel, renderDamdfe } from './damdfe.ts';
import { ACCESS_KEY } from '../../base/common/access-key.ts';

let credentials: SigningCredentials;
const parsers: PDFParse[] = [];
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'DAMDFE TESTE' }).certificate;
});
afterAll(async () => {
  await Promise.all(parsers.map((p) => p.destroy()));
});

function thirdParty(): string {
  const r = structuredClone(sampleMdfeRequest({ nMDF: 42, placa: 'xyz-9a87' }));
  r.tpTransp = '2';
  r.rodo.veicTracao.prop = { CNPJ: '11444777000161', RNTRC: '87654321', xNome: 'Frota Terceira Ltda', UF: 'MG', tpProp: '2' };
  r.rodo.veicTracao.condutor = [
    { xNome: 'João da Silva', CPF: '52998224725' },
    { xNome: 'Maria Souza', CPF: '11144477735' },
  ];
  r.seg = { ...(r.seg as object), respSeg: '2', CNPJ: '11444777000161', nAver: ['AVB-1', 'AVB-2'] } as typeof r.seg;
  r.infAdic = { infCpl: 'Entrega agendada para o período da manhã' };
  return issueMdfe(r, { emitter: demoEmitter({ crt: 3 }), dhEmi: '2026-03-10T14:03:05-03:00', credentials }).xml;
}

describe('damdfeModel', () => {
  it('reads owner, drivers, insurance, route and totals from the XML', () => {
    const xml = thirdParty();
    const m = damdfeModel(xml);
    expect(m).toMatchObject({
      numero: '42',
      serie: '1',
      dhEmi: '10/03/2026 14:03:05',
      homologacao: true,
      contingencia: false,
      ufIni: 'SP',
      ufFim: 'BA',
      percurso: ['MG'],
      veiculo: { placa: 'XYZ9A87', uf: 'SP', tara: '9000', proprietario: 'Frota Terceira Ltda - CNPJ 11.444.777/0001-61 - RNTRC 87654321' },
      condutores: [
        { nome: 'João da Silva', cpf: '529.982.247-25' },
        { nome: 'Maria Souza', cpf: '111.444.777-35' },
      ],
      seguros: [
        {
          responsavel: 'Contratante (CNPJ 11.444.777/0001-61)',
          seguradora: 'Seguradora Exemplo S.A.',
          apolice: 'APOL-2026-001',
          averbacoes: ['AVB-1', 'AVB-2'],
        },
      ],
      totais: { qCTe: '1', qNFe: '1', vCarga: '152.340,75', unidade: 'KG', qCarga: '12.500,125' },
      observacoes: 'Entrega agendada para o período da manhã',
    });
    expect(m.protocolo).toBeUndefined();
    expect(m.key).toMatch(ACCESS_KEY);
  });

  it('an authorized and closed manifest: protocol and mark on the page', async () => {
    const xml = thirdParty();
    const proc = wrapMdfeProc(
      xml,
      mdfeProtocolFor(xml, {
        cStat: '100',
        xMotivo: 'Autorizado o uso do MDF-e',
        verAplic: 'TESTE',
        dhRecbto: '2026-03-10T14:03:07-03:00',
        nProt: '135260000000042',
      }),
    );
    const model = damdfeModel(proc, 'ENCERRADO');
    expect(model.protocolo).toEqual({ nProt: '135260000000042', dhRecbto: '10/03/2026 14:03:07' });
    const pdf = await renderDamdfe(model);
    const parser = new PDFParse({ data: new Uint8Array(pdf) });
    parsers.push(parser);
    const text = (await parser.getText()).text.replace(/\s+/g, ' ');
    for (const expected of [
      'MDF-e ENCERRADO',
      '135260000000042 10/03/2026 14:03:07',
      'Proprietário: Frota Terceira Ltda',
      'Condutor: Maria Souza - CPF 111.444.777-35',
      'Averbação: AVB-1, AVB-2',
      'Entrega agendada para o período da manhã',
      'XYZ9A87',
    ]) {
      expect(text).toContain(expected);
    }
  });
});

describe('alphanumeric CNPJ on the DAMDFE', () => {
  it('an emitter 12ABC34501DE35 and parties with letters elsewhere: valid manifest, masks with letters, and the key barcode in sets C and A at least 11.5 cm wide', async () => {
    const party = generateCnpj({ version: 2 }); // letters wherever the generator puts them
    const emitter = demoEmitter({ cnpj: '12ABC34501DE35', crt: 3 });
    const signer = generateTestCertificate({ cnpj: emitter.cnpj, xNome: 'DAMDFE ALFA' }).certificate;
    const r = structuredClone(sampleMdfeRequest({ nMDF: 43 }));
    r.tpTransp = '2';
    r.rodo.veicTracao.prop = { CNPJ: party, RNTRC: '87654321', xNome: 'Frota Alfa Ltda', UF: 'MG', tpProp: '2' };
    r.rodo.infContratante = [{ xNome: 'Contratante Alfa Ltda', CNPJ: party }];
    r.rodo.infPag![0]!.CNPJ = party;
    r.seg = { ...(r.seg as object), respSeg: '2', CNPJ: party, seg_CNPJ: party } as typeof r.seg;
    const xml = issueMdfe(r, { emitter, dhEmi: '2026-12-10T14:03:05-03:00', credentials: signer }).xml;
    expect(validateXml(xml, 'mdfe'), party).toEqual({ valid: true, errors: [] });

    const m = damdfeModel(xml);
    expect(m.key.slice(6, 20)).toBe('12ABC34501DE35');
    expect(m.emitente.cnpj).toBe('CNPJ 12.ABC.345/01DE-35');
    expect(m.veiculo.proprietario).toContain(`CNPJ ${formatCnpj(party)}`);
    expect(m.seguros[0]).toMatchObject({ responsavel: `Contratante (CNPJ ${formatCnpj(party)})`, cnpjSeguradora: formatCnpj(party) });
    const text = (await textOf(await renderDamdfe(m))).replace(/\s+/g, ' ');
    expect(text).toContain('12.ABC.345/01DE-35');
    expect(text).toContain(formatCnpj(party));

    const bars = keyBarcodeLayout(m.key);
    expect(bars.width).toBeGreaterThanOrEqual((11.5 / 2.54) * 72);
    // A numeric key keeps the CODE-128C of before: 277 modules of 1 pt.
    expect(keyBarcodeLayout(damdfeModel(thirdParty()).key)).toMatchObject({ module: 1, width: 277 });
  });
});

async function textOf(pdf: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  parsers.push(parser);
  return (await parser.getText()).text;
}
