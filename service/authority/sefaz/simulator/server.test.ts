// The simulator refuses what a real authorizer refuses, before any business rule: raw requests
// over HTTPS with a client certificate, built here by hand (not by the connector) so that each
// one breaks exactly one thing.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../../../../fiscal/certificate.ts';
import { DEMO_CSC, demoEmitter, sampleNfceRequest } from '../../../../fiscal/samples.ts';
import { issueNfce } from '../../../../fiscal/nfce/build.ts';
import type { AuthorityCompany } from '../../port.ts';
import { SandboxAuthority } from '../../sandbox.ts';
import { soapRequest } from '../envelope.ts';
import { SOAP12_NS, soapAction } from '../services.ts';
import { SefazSimulator } from './server.ts';

const dir = mkdtempSync(join(tmpdir(), 'balcao-sefaz-simulator-'));
const cnpj = '11222333000181';
const cert = generateTestCertificate({ cnpj, xNome: 'LOJA SIMULADA' }).certificate;
const company: AuthorityCompany = { id: 'loja', cnpj, uf: 'SP', environment: 'homologacao', csc: DEMO_CSC, credentials: cert };
let sandbox: SandboxAuthority;
let sim: SefazSimulator;
let agent: Agent;

beforeAll(async () => {
  sandbox = new SandboxAuthority({ file: join(dir, 'sefaz.sqlite'), settings: () => ({ latencyMs: 0, available: true }), clock: () => new Date() });
  sim = await SefazSimulator.start({ authority: sandbox });
  sim.enroll(company);
  agent = new Agent({ connect: { key: cert.privateKeyPem, cert: cert.certificatePem, ca: [sim.caPem] } });
});

afterAll(async () => {
  await agent?.close();
  await sim?.close();
  sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(path: string, body: string, contentType: string): Promise<{ status: number; text: string }> {
  const res = await request(new URL(path, sim.origin), { method: 'POST', dispatcher: agent, headers: { 'content-type': contentType }, body });
  return { status: res.statusCode, text: await res.body.text() };
}

const STATUS_PATH = '/ws/NFeStatusServico4.asmx';
const status = (tpAmb = '2') =>
  `<consStatServ xmlns="http://www.portalfiscal.inf.br/nfe" versao="4.00"><tpAmb>${tpAmb}</tpAmb><cUF>35</cUF><xServ>STATUS</xServ></consStatServ>`;
const cStatOf = (text: string) => /<cStat>([0-9]+)<\/cStat>/.exec(text)?.[1];

describe('the SOAP frame', () => {
  it('answers a well-formed status request with 107, in a SOAP 1.2 envelope whose prefix varies', async () => {
    const prefixes = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const { body, contentType } = soapRequest('NFeStatusServico4', status(), '35');
      const res = await post(STATUS_PATH, body, contentType);
      expect(res.status).toBe(200);
      expect(cStatOf(res.text)).toBe('107');
      prefixes.add(/<([A-Za-z]+):Envelope xmlns:\1="http:\/\/www\.w3\.org\/2003\/05\/soap-envelope"/.exec(res.text)![1]!);
    }
    expect(prefixes.size).toBe(3);
  });

  it('a wrong or missing action is a SOAP Fault (HTTP 500); SOAP 1.1 is 415; an unknown path 404', async () => {
    const { body } = soapRequest('NFeStatusServico4', status(), '35');
    const wrong = await post(STATUS_PATH, body, `application/soap+xml;charset=utf-8;action="${soapAction('NFeConsultaProtocolo4')}"`);
    expect(wrong.status).toBe(500);
    expect(wrong.text).toContain('<soap:Fault>');
    expect(wrong.text).toContain('Server did not recognize the value of HTTP Header SOAPAction');
    const missing = await post(STATUS_PATH, body, 'application/soap+xml;charset=utf-8');
    expect(missing.status).toBe(500);
    const soap11 = await post(STATUS_PATH, body, 'text/xml; charset=utf-8');
    expect(soap11.status).toBe(415);
    const unknown = await post('/ws/NaoExiste.asmx', body, 'application/soap+xml');
    expect(unknown.status).toBe(404);
  });

  it('a SOAP 1.1 envelope or a body wrapper in the wrong namespace is a Fault', async () => {
    const { contentType } = soapRequest('NFeStatusServico4', status(), '35');
    const v11 = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><nfeDadosMsg xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeStatusServico4">${status()}</nfeDadosMsg></s:Body></s:Envelope>`;
    const res = await post(STATUS_PATH, v11, contentType);
    expect(res.status).toBe(500);
    expect(res.text).toContain('VersionMismatch');
    const wrongNs = `<soap12:Envelope xmlns:soap12="${SOAP12_NS}"><soap12:Body><nfeDadosMsg xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeStatusServico">${status()}</nfeDadosMsg></soap12:Body></soap12:Envelope>`;
    expect((await post(STATUS_PATH, wrongNs, contentType)).status).toBe(500);
  });
});

describe('the message, before any business rule', () => {
  const send = async (message: string, service: 'NFeStatusServico4' | 'NFeAutorizacao4' | 'MDFeStatusServico' = 'NFeStatusServico4') => {
    const { body, contentType } = soapRequest(service, message, '35');
    const path = {
      NFeStatusServico4: STATUS_PATH,
      NFeAutorizacao4: '/ws/NFeAutorizacao4.asmx',
      MDFeStatusServico: '/ws/MDFeStatusServico/MDFeStatusServico.asmx',
    }[service];
    return post(path, body, contentType);
  };

  it('404 for a namespace prefix, 588 for blanks between tags, 215 for a schema error, 252 for the other environment', async () => {
    const prefixed = status()
      .replace(/<(\/?)consStatServ/g, '<$1nfe:consStatServ')
      .replace('xmlns=', 'xmlns:nfe=');
    expect(cStatOf((await send(prefixed)).text)).toBe('404');
    expect(cStatOf((await send(status().replace('<cUF>', '\n  <cUF>'))).text)).toBe('588');
    const schema = await send(status().replace('<xServ>STATUS</xServ>', '<xServ>ESTADO</xServ>'));
    expect(cStatOf(schema.text)).toBe('215');
    expect(schema.text).toContain('Rejeição: Falha no schema XML [');
    expect(cStatOf((await send(status('1'))).text)).toBe('252');
  });

  it('225 for an enviNFe that fails its schema; 452 for an NFC-e asked asynchronously', async () => {
    const doc = issueNfce(sampleNfceRequest({ nNF: 1 }), { emitter: demoEmitter({ cnpj }), credentials: cert, dhEmi: new Date(), tpEmis: 1 });
    const lote = (indSinc: string, idLote = '1') =>
      `<enviNFe xmlns="http://www.portalfiscal.inf.br/nfe" versao="4.00"><idLote>${idLote}</idLote><indSinc>${indSinc}</indSinc>${doc.xml}</enviNFe>`;
    expect(cStatOf((await send(lote('1', 'x'), 'NFeAutorizacao4')).text)).toBe('225');
    expect(cStatOf((await send(lote('0'), 'NFeAutorizacao4')).text)).toBe('452');
  });

  it('242 for an MDF-e service without mdfeCabecMsg in the SOAP header', async () => {
    const message = '<consStatServMDFe xmlns="http://www.portalfiscal.inf.br/mdfe" versao="3.00"><tpAmb>2</tpAmb><xServ>STATUS</xServ></consStatServMDFe>';
    const { body, contentType } = soapRequest('MDFeStatusServico', message, '35');
    const withHeader = await post('/ws/MDFeStatusServico/MDFeStatusServico.asmx', body, contentType);
    expect(cStatOf(withHeader.text)).toBe('107');
    expect(withHeader.text).toMatch(
      /<mdfeCabecMsg xmlns="http:\/\/www\.portalfiscal\.inf\.br\/mdfe\/wsdl\/MDFeStatusServico"><cUF>35<\/cUF><versaoDados>3\.00<\/versaoDados><\/mdfeCabecMsg>/,
    );
    const headless = body.replace(/<soap12:Header>.*<\/soap12:Header>/, '');
    expect(cStatOf((await post('/ws/MDFeStatusServico/MDFeStatusServico.asmx', headless, contentType)).text)).toBe('242');
  });

  it('paralysed: every service, status included, answers 108 or 109', async () => {
    sim.paralyse('109');
    try {
      expect(cStatOf((await send(status())).text)).toBe('109');
    } finally {
      sim.paralyse(undefined);
    }
    expect(cStatOf((await send(status())).text)).toBe('107');
  });
});
