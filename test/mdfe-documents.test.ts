// The MDF-e's documents over real HTTP: the XML (mdfeProc valid against procMDFe_v3.00.xsd when
// authorized, the signed MDFe alone when rejected) and the DAMDFE PDF, read back the way a person
// and a scanner would: its text extracted, its page rendered to pixels, the QR Code decoded with
// jsQR and the Code-128 bar code decoded by the small reader below (an independent decoder: the
// pattern table is the standard's, not the encoder's).

import { DOMParser } from '@xmldom/xmldom';
import { PDFParse } from 'pdf-parse';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAccessKey } from '../fiscal/access-key.ts';
import type { MdfeRequest } from '../fiscal/mdfe/types.ts';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { validateXml } from '../fiscal/schema.ts';
import { readQr } from './escpos-decoder.ts';
import { api, createCompany, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

let service: ServiceProcess;
let client: ReturnType<typeof api>;
let token: string;
const parsers: PDFParse[] = [];

beforeAll(async () => {
  const dataDir = tempDataDir();
  ({ token } = await createCompany(dataDir, { cnpj: '11222333000181', uf: 'SP', nome: 'Transportadora Documentos Ltda' }));
  service = await startService({ dataDir });
  client = api(service.url, token);
});

afterAll(async () => {
  await Promise.all(parsers.map((p) => p.destroy()));
  await service?.stop();
});

let n = 0;
async function issue(edit: (r: MdfeRequest) => void = () => {}) {
  n++;
  const body = structuredClone(sampleMdfeRequest({ nMDF: n, placa: `DOC${String(n).padStart(4, '0')}` }));
  edit(body);
  const res = await client.post('/api/v1/mdfe/emitir', body);
  expect(res.status, res.text).toBe(201);
  return { body, mdfe: res.body as { mdfe_id: string; chave: string; protocolo: string | null; situacao: string } };
}

async function binary(path: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(service.url + path, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

const qrCodMDFe = (xml: string): string => new DOMParser().parseFromString(xml, 'text/xml').getElementsByTagName('qrCodMDFe')[0]!.textContent!;

describe('GET /api/v1/mdfe/{id}/xml', () => {
  it('authorized: mdfeProc with the protocol, valid against procMDFe_v3.00.xsd', async () => {
    const { mdfe } = await issue();
    const res = await client.get(`/api/v1/mdfe/${mdfe.mdfe_id}/xml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(res.text).toMatch(/<mdfeProc [^>]*versao="3.00"/);
    expect(res.text).toContain(`<nProt>${mdfe.protocolo}</nProt>`);
    expect(res.text).toContain(`Id="MDFe${mdfe.chave}"`);
    expect(validateXml(res.text, 'procMDFe')).toEqual({ valid: true, errors: [] });
  });

  it('rejected: the signed MDFe alone, valid against mdfe_v3.00.xsd', async () => {
    const { mdfe } = await issue((r) => delete r.rodo.infContratante);
    expect(mdfe.situacao).toBe('rejeitado');
    const res = await client.get(`/api/v1/mdfe/${mdfe.mdfe_id}/xml`);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('mdfeProc');
    expect(res.text).not.toContain('protMDFe');
    expect(res.text).toContain('<Signature');
    expect(validateXml(res.text, 'mdfe')).toEqual({ valid: true, errors: [] });
  });

  it('stays the mdfeProc once closed', async () => {
    const { mdfe } = await issue();
    await client.post(`/api/v1/mdfe/${mdfe.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
    const res = await client.get(`/api/v1/mdfe/${mdfe.mdfe_id}/xml`);
    expect(validateXml(res.text, 'procMDFe').valid).toBe(true);
  });
});

// --- Code 128 (set C) reader ----------------------------------------------------------------------

// ISO/IEC 15417 bar/space widths of the values 0..106 (106 = stop, 7 elements).
const CODE128 = (
  '212222 222122 222221 121223 121322 131222 122213 122312 132212 221213 221312 231212 112232 122132 122231 113222 ' +
  '123122 123221 223211 221132 221231 213212 223112 312131 311222 321122 321221 312212 322112 322211 212123 212321 ' +
  '232121 111323 131123 131321 112313 132113 132311 211313 231113 231311 112133 112331 132131 113123 113321 133121 ' +
  '313121 211331 231131 213113 213311 213131 311123 311321 331121 312113 312311 332111 314111 221411 431111 111224 ' +
  '111422 121124 121421 141122 141221 112214 112412 122114 122411 142112 142211 241211 221114 413111 241112 134111 ' +
  '111242 121142 121241 114212 124112 124211 411212 421112 421211 212141 214121 412121 111143 111341 131141 114113 ' +
  '114311 411113 411311 113141 114131 311141 411131 211412 211214 211232 2331112'
).split(' ');

/** Decodes a Code-128 set C symbol from one row of pixels, or undefined. */
function decodeCode128Row(row: boolean[]): string | undefined {
  const runs: number[] = [];
  let start = row.indexOf(true);
  if (start < 0) return undefined;
  for (let i = start, len = 0, dark = true; i <= row.length; i++) {
    if (i < row.length && row[i] === dark) {
      len++;
      continue;
    }
    runs.push(len);
    if (i === row.length) break;
    dark = row[i]!;
    len = 1;
  }
  // Try each dark run as the start of the symbol (start C = 211232).
  for (start = 0; start + 6 <= runs.length; start += 2) {
    const chunk = runs.slice(start, start + 6);
    const module = chunk.reduce((a, b) => a + b, 0) / 11;
    const widths = chunk.map((w) => Math.round(w / module)).join('');
    if (widths !== CODE128[105]) continue;
    const values: number[] = [105];
    let i = start + 6;
    for (;;) {
      const six = runs.slice(i, i + 6);
      if (six.length < 6) break;
      const m = six.reduce((a, b) => a + b, 0) / 11;
      const code = six.map((w) => Math.round(w / m)).join('');
      const stop = runs.slice(i, i + 7);
      const ms = stop.reduce((a, b) => a + b, 0) / 13;
      if (stop.length === 7 && stop.map((w) => Math.round(w / ms)).join('') === CODE128[106]) {
        const [, ...data] = values;
        const check = data.pop()!;
        const sum = data.reduce((acc, v, k) => acc + v * (k + 1), 105) % 103;
        if (sum !== check) return undefined;
        return data.map((v) => String(v).padStart(2, '0')).join('');
      }
      const value = CODE128.indexOf(code);
      if (value < 0 || value > 99) break; // set C only: pairs of digits
      values.push(value);
      i += 6;
    }
  }
  return undefined;
}

function decodeCode128(png: PNG): string | undefined {
  for (let y = 0; y < png.height; y += 2) {
    const row: boolean[] = [];
    for (let x = 0; x < png.width; x++) {
      const at = (y * png.width + x) * 4;
      row.push(png.data[at]! + png.data[at + 1]! + png.data[at + 2]! < 3 * 128);
    }
    const found = decodeCode128Row(row);
    if (found) return found;
  }
  return undefined;
}

// -----------------------------------------------------------------------------------------------

describe('GET /api/v1/mdfe/{id}/damdfe', () => {
  let mdfe: { mdfe_id: string; chave: string; protocolo: string | null };
  let body: MdfeRequest;
  let pdf: Buffer;
  let xml: string;

  beforeAll(async () => {
    ({ mdfe, body } = await issue());
    const res = await binary(`/api/v1/mdfe/${mdfe.mdfe_id}/damdfe`);
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/pdf');
    pdf = res.bytes;
    xml = (await client.get(`/api/v1/mdfe/${mdfe.mdfe_id}/xml`)).text;
  });

  const open = (bytes: Buffer) => {
    const p = new PDFParse({ data: new Uint8Array(bytes) });
    parsers.push(p);
    return p;
  };

  it('is a PDF whose text shows the key, the plate, the emitter, the route, documents, totals, insurance and the homologation mark', async () => {
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const { text } = await open(pdf).getText();
    const oneLine = text.replace(/\s+/g, ' ');
    expect(oneLine).toContain(formatAccessKey(mdfe.chave));
    expect(text).toContain(body.rodo.veicTracao.placa);
    expect(text).toContain('DAMDFE');
    expect(text).toContain('Transportadora Documentos Ltda');
    expect(text).toContain('CNPJ 11.222.333/0001-81');
    expect(text).toContain(mdfe.protocolo!);
    expect(text).toContain('SP > MG > BA');
    expect(text).toContain('João da Silva - CPF 529.982.247-25');
    expect(text).toContain('3550308 - São Paulo');
    expect(text).toContain('2927408 - Salvador - BA');
    expect(text).toContain('2910800 - Feira de Santana - BA');
    expect(oneLine).toContain(`CT-e ${formatAccessKey(body.infDoc.infMunDescarga[0]!.infCTe![0]!.chCTe)}`);
    expect(oneLine).toContain(`NF-e ${formatAccessKey(body.infDoc.infMunDescarga[1]!.infNFe![0]!.chNFe)}`);
    expect(text).toContain('R$ 152.340,75');
    expect(text).toContain('12.500,125 KG');
    expect(oneLine).toContain('Seguradora Exemplo S.A.');
    expect(oneLine).toContain('Apólice: APOL-2026-001');
    expect(oneLine).toContain('Averbação: AVB-000123');
    expect(text).toContain('SEM VALOR FISCAL - EMITIDO EM AMBIENTE DE HOMOLOGAÇÃO');
  });

  it('its QR Code decodes to the qrCodMDFe of the XML, and its bar code to the access key', async () => {
    // The page rendered at 4× (288 dpi): a QR module is ~10 px, a bar-code module ~4 px.
    const shot = await open(pdf).getScreenshot({ scale: 4, imageBuffer: true, first: 1 });
    const png = PNG.sync.read(Buffer.from(shot.pages[0]!.data));
    const expected = qrCodMDFe(xml);
    expect(expected).toBe(`https://dfe-portal.svrs.rs.gov.br/mdfe/qrCode?chMDFe=${mdfe.chave}&tpAmb=2`);
    expect(readQr(png)?.data).toBe(expected);
    expect(decodeCode128(png)).toBe(mdfe.chave);
  });

  it('marks a cancelled manifest; refuses a rejected one (422 estado_invalido)', async () => {
    const { mdfe: cancelled } = await issue();
    await client.post(`/api/v1/mdfe/${cancelled.mdfe_id}/cancelar`, { justificativa: 'Carga não embarcada no prazo' });
    const res = await binary(`/api/v1/mdfe/${cancelled.mdfe_id}/damdfe`);
    expect(res.status).toBe(200);
    expect((await open(res.bytes).getText()).text).toContain('MDF-e CANCELADO');

    const { mdfe: rejected } = await issue((r) => delete r.seg);
    const refused = await client.get(`/api/v1/mdfe/${rejected.mdfe_id}/damdfe`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('estado_invalido');
  });

  it('continues on further pages when the document list is long, every key in the text', async () => {
    const keys: string[] = [];
    const { mdfe: big } = await issue((r) => {
      const base = r.infDoc.infMunDescarga[1]!.infNFe![0]!.chNFe;
      // 120 distinct NF-e keys (number field varied, check digit recomputed).
      const withDv = (k43: string) => {
        let weight = 2;
        let sum = 0;
        for (let i = 42; i >= 0; i--) {
          sum += Number(k43[i]) * weight;
          weight = weight === 9 ? 2 : weight + 1;
        }
        const r11 = sum % 11;
        return k43 + (r11 < 2 ? 0 : 11 - r11);
      };
      for (let i = 0; i < 120; i++) keys.push(withDv(base.slice(0, 25) + String(i + 1).padStart(9, '0') + base.slice(34, 43)));
      r.infDoc.infMunDescarga[1]!.infNFe = keys.map((chNFe) => ({ chNFe }));
    });
    const res = await binary(`/api/v1/mdfe/${big.mdfe_id}/damdfe`);
    expect(res.status).toBe(200);
    const parser = open(res.bytes);
    const info = await parser.getInfo();
    expect(info.total).toBeGreaterThan(1);
    const oneLine = (await parser.getText()).text.replace(/\s+/g, ' ');
    for (const k of keys) expect(oneLine).toContain(formatAccessKey(k));
  });
});
