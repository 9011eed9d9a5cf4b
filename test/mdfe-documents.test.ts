// The MDF-e's documents over real HTTP: the XML (mdfeProc valid against procMDFe_v3.00.xsd when
// authorized, the signed MDFe alone when rejected) and the DAMDFE PDF, read back the way a person
// and a scanner would: its text extracted, its page rendered to pixels, the QR Code decoded with
// jsQR and the Code-128 bar code decoded by zbarimg (zbar-tools, a decoder independent of the
// encoder).

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
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

// --- Code 128 reader ------------------------------------------------------------------------------

/**
 * The first Code 128 symbol zbarimg (zbar-tools, an independent decoder) reads on the page's
 * picture. Run asynchronously: a blocked event loop would keep the HTTP client from seeing the
 * service close an idle keep-alive connection, and the next request would go out on it.
 */
async function decodeCode128(png: PNG): Promise<string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'balcao-damdfe-'));
  try {
    writeFileSync(join(dir, 'pagina.png'), PNG.sync.write(png));
    const { stdout: out } = await promisify(execFile)('zbarimg', ['--raw', '-q', '-Sdisable', '-Scode128.enable', join(dir, 'pagina.png')], {
      encoding: 'utf8',
    });
    return out.trim().split('\n')[0] || undefined;
  } catch {
    return undefined; // zbarimg exits 4 when it finds no symbol
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
    expect(await decodeCode128(png)).toBe(mdfe.chave);
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
