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
import { damdfeModel, renderDamdfe } from './damdfe.ts';

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
    expect(m.key).toMatch(/^[0-9]{44}$/);
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
