// The SEFAZ connector against the simulator, over real HTTPS with mutual TLS on loopback: the
// simulator's own CA, the companies' own certificates, every message captured by the simulator
// and checked against its official schema, the rule book deciding.

import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../../../fiscal/certificate.ts';
import type { Emitter } from '../../../fiscal/company.ts';
import { mdfeClosingEvent, nfeCancellationEvent } from '../../../fiscal/events.ts';
import { buildInutilizacao } from '../../../fiscal/inutilizacao.ts';
import { issueMdfe } from '../../../fiscal/mdfe/build.ts';
import { issueNfce } from '../../../fiscal/nfce/build.ts';
import { wrapNfeProc } from '../../../fiscal/protocol.ts';
import { DEMO_CSC, demoEmitter, sampleMdfeRequest, sampleNfceRequest } from '../../../fiscal/samples.ts';
import { validateXml, type SchemaName } from '../../../fiscal/schema.ts';
import { AuthorityCertificateError, AuthorityUnavailableError, type AuthorityCompany } from '../port.ts';
import { SandboxAuthority } from '../sandbox.ts';
import { SefazAuthority } from './connector.ts';
import { SERVICES, serviceNames } from './services.ts';
import { SefazSimulator } from './simulator/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'balcao-sefaz-connector-'));
let sandbox: SandboxAuthority;
let sim: SefazSimulator;
let sefaz: SefazAuthority;

let sequence = 0;
function newCompany(uf = 'SP'): { company: AuthorityCompany; emitter: Emitter } {
  sequence += 1;
  const cnpj = ['11222333000181', '11444777000161', '45723174000110', '60701190000104', '33000167000101', '19131243000197', '07526557000100'][sequence - 1]!;
  const cert = generateTestCertificate({ cnpj, xNome: `LOJA ${sequence}` }).certificate;
  const credentials = { privateKeyPem: cert.privateKeyPem, certificatePem: cert.certificatePem };
  const emitter = demoEmitter({ cnpj });
  return { company: { id: `empresa-${sequence}`, cnpj, uf, environment: 'homologacao', csc: DEMO_CSC, credentials }, emitter };
}

/** A signed NFC-e; `cardWithoutGroup`: paid by card without the card group (the rule book's 391). */
function nfce(c: { company: AuthorityCompany; emitter: Emitter }, nNF: number, over: { cNF?: string; cardWithoutGroup?: boolean } = {}) {
  const body = sampleNfceRequest({ nNF, ...(over.cardWithoutGroup && { payment: 'card' as const }) });
  if (over.cardWithoutGroup) delete body.pag[0]!.card;
  return issueNfce(body, { emitter: c.emitter, credentials: c.company.credentials, dhEmi: new Date(), tpEmis: 1, ...(over.cNF && { cNF: over.cNF }) });
}

const connector = (options: ConstructorParameters<typeof SefazAuthority>[0] = {}) =>
  new SefazAuthority({ origin: sim.origin, extraCa: [sim.caPem], timeoutMs: 5_000, ...options });

let a: ReturnType<typeof newCompany>;

beforeAll(async () => {
  sandbox = new SandboxAuthority({ file: join(dir, 'sefaz.sqlite'), settings: () => ({ latencyMs: 0, available: true }), clock: () => new Date() });
  sim = await SefazSimulator.start({ authority: sandbox, capture: true });
  sefaz = connector();
  a = newCompany();
  sim.enroll(a.company);
});

afterAll(async () => {
  await sefaz?.close();
  await sim?.close();
  sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  sim.syncAnswer = 'protNFe';
  sim.receiptPolls = 0;
  sim.paralyse(undefined);
});

describe('every service over the wire', () => {
  it('each request the connector sends is valid against its official schema, and every service of the catalogue was used', async () => {
    const from = sim.requests.length;
    const doc = nfce(a, 1);
    const authorized = await sefaz.authorizeNfe(a.company, doc.xml);
    expect(authorized).toMatchObject({ cStat: '100', nProt: expect.stringMatching(/^\d{15}$/) });
    expect(validateXml(wrapNfeProc(doc.xml, authorized.protNFe), 'procNFe').errors).toEqual([]);
    expect(await sefaz.consultNfe(a.company, doc.key)).toMatchObject({ found: true, cancelled: false, verdict: { nProt: authorized.nProt } });

    sim.syncAnswer = 'recibo';
    const viaReceipt = await sefaz.authorizeNfe(a.company, nfce(a, 2).xml);
    expect(viaReceipt.cStat).toBe('100');
    sim.syncAnswer = 'protNFe';

    const cancel = nfeCancellationEvent(
      { author: { cnpj: a.company.cnpj, environment: 'homologacao' }, chNFe: doc.key, nProt: authorized.nProt!, xJust: 'Cliente desistiu da compra no caixa' },
      a.company.credentials,
    );
    expect(await sefaz.registerNfeEvent(a.company, cancel)).toMatchObject({ cStat: '135', nProt: expect.stringMatching(/^\d{15}$/) });
    expect(await sefaz.consultNfe(a.company, doc.key)).toMatchObject({ found: true, cancelled: true });

    const inut = buildInutilizacao(
      { emitter: a.emitter, ano: new Date().getFullYear(), serie: 7, nNFIni: 3, nNFFin: 5, xJust: 'Numeros pulados por falha no sistema', model: '65' },
      a.company.credentials,
    );
    const voided = await sefaz.voidNfeNumbers(a.company, inut);
    expect(voided).toMatchObject({ cStat: '102', nProt: expect.stringMatching(/^\d{15}$/) });
    expect(voided.retInutNFe).toMatch(/^<retInutNFe versao="4.00">/);

    const mdfe = issueMdfe(sampleMdfeRequest({ nMDF: 1, placa: 'ABC1D23' }), { emitter: a.emitter, dhEmi: new Date(), credentials: a.company.credentials });
    const manifest = await sefaz.authorizeMdfe(a.company, mdfe.xml);
    expect(manifest).toMatchObject({ cStat: '100', nProt: expect.stringMatching(/^\d{15}$/) });
    expect(await sefaz.openManifests(a.company)).toEqual({
      cStat: '111',
      xMotivo: expect.any(String),
      manifests: [{ chMDFe: mdfe.key, nProt: manifest.nProt }],
    });
    const closing = mdfeClosingEvent(
      {
        author: { cnpj: a.company.cnpj, environment: 'homologacao' },
        chMDFe: mdfe.key,
        nProt: manifest.nProt!,
        UF: 'BA',
        cMun: '2927408',
        dtEnc: new Date().toISOString().slice(0, 10),
        dhEvento: new Date(),
        nSeqEvento: 1,
      },
      a.company.credentials,
    );
    expect(await sefaz.registerMdfeEvent(a.company, closing)).toMatchObject({ cStat: '135' });
    expect(await sefaz.consultMdfe(a.company, mdfe.key)).toMatchObject({ found: true, state: 'encerrado' });
    expect((await sefaz.openManifests(a.company)).cStat).toBe('112');

    expect(await sefaz.status('nfe', a.company)).toMatchObject({ cStat: '107', cached: false });
    expect(await sefaz.status('mdfe', a.company)).toMatchObject({ cStat: '107', cached: false });

    const sent = sim.requests.slice(from);
    expect(sent.filter((r) => !r.valid).map((r) => [r.service, r.errors[0]])).toEqual([]);
    // And the simulator's answers are valid against the official answer schemas too.
    const invalidAnswers = sent.flatMap((r) => {
      const check = validateXml(r.answer!, SERVICES[r.service].answer as SchemaName);
      return check.valid ? [] : [[r.service, check.errors[0]]];
    });
    expect(invalidAnswers).toEqual([]);
    expect(new Set(sent.map((r) => r.service))).toEqual(new Set(serviceNames));
    // The paths are the official ones (SP's own NFC-e host, SVRS for the MDF-e).
    expect(sent.find((r) => r.service === 'NFeAutorizacao4')!.path).toBe('/ws/nfeautorizacao4.asmx');
    expect(sent.find((r) => r.service === 'MDFeRecepcaoSinc')!.path).toBe('/ws/mdferecepcaosinc/mdferecepcaosinc.asmx');
    expect(
      sent.every((r) =>
        /^application\/soap\+xml;charset=utf-8;action="http:\/\/www\.portalfiscal\.inf\.br\/(nfe|mdfe)\/wsdl\/[A-Za-z0-9]+\/[A-Za-z]+"$/.test(r.contentType),
      ),
    ).toBe(true);
  });

  it('MDF-e: the signed manifest travels as base64(gzip) and arrives byte for byte', async () => {
    const mdfe = issueMdfe(sampleMdfeRequest({ nMDF: 2, placa: 'XYZ9A87' }), { emitter: a.emitter, dhEmi: new Date(), credentials: a.company.credentials });
    const from = sim.requests.length;
    await sefaz.authorizeMdfe(a.company, mdfe.xml);
    const [sent] = sim.requests.slice(from).filter((r) => r.service === 'MDFeRecepcaoSinc');
    expect(sent!.message).toBe(mdfe.xml);
    // And on the wire it really is base64 of a gzip stream, in the body wrapper.
    const { soapRequest } = await import('./envelope.ts');
    const { body } = soapRequest('MDFeRecepcaoSinc', mdfe.xml, '35');
    const b64 = /<mdfeDadosMsg xmlns="http:\/\/www\.portalfiscal\.inf\.br\/mdfe\/wsdl\/MDFeRecepcaoSinc">([A-Za-z0-9+/=]+)<\/mdfeDadosMsg>/.exec(body)![1]!;
    expect(gunzipSync(Buffer.from(b64, 'base64')).toString('utf8')).toBe(mdfe.xml);
  });
});

describe('mutual TLS', () => {
  it('a certificate the authority does not know is refused in the handshake and reported as a certificate problem, naming it', async () => {
    const stranger = newCompany(); // never enrolled
    const from = sim.requests.length;
    const err = await sefaz.authorizeNfe(stranger.company, nfce(stranger, 1).xml).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthorityCertificateError);
    expect(err).not.toBeInstanceOf(AuthorityUnavailableError);
    expect((err as Error).message).toMatch(/^A SEFAZ \(127\.0\.0\.1:\d+\) .*certificado digital da empresa/);
    expect((err as Error).message).toContain(`CN=LOJA ${sequence}:${stranger.company.cnpj}`);
    expect(sim.requests.length).toBe(from);
  });

  it('a client without a certificate never gets past the handshake', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const url = new URL('/ws/NFeStatusServico4.asmx', sim.origin);
      const req = httpsRequest(url, { method: 'POST', ca: sim.caPem, headers: { 'content-type': 'application/soap+xml' } }, (res) =>
        resolve(`HTTP ${res.statusCode}`),
      );
      req.on('error', (e: NodeJS.ErrnoException) => resolve(`${e.code} ${e.message}`));
      req.end('<x/>');
    });
    expect(outcome).toMatch(/alert handshake failure|certificate required|before secure TLS connection/i);
  });

  it('the simulator is verified like any server: without its CA the connection is refused as untrusted', async () => {
    const untrusting = new SefazAuthority({ origin: sim.origin, timeoutMs: 5_000 });
    try {
      await expect(untrusting.consultNfe(a.company, nfce(a, 99).key)).rejects.toThrow(/Certificado do servidor .* não reconhecido .*BALCAO_SEFAZ_CA/);
    } finally {
      await untrusting.close();
    }
  });
});

describe('answers as SEFAZ gives them', () => {
  it('103 + recibo even with indSinc=1: consReciNFe after tMed, 105 then 104 with the protocol', async () => {
    sim.syncAnswer = 'recibo';
    sim.receiptPolls = 1;
    const from = sim.requests.length;
    const doc = nfce(a, 10);
    const v = await sefaz.authorizeNfe(a.company, doc.xml);
    expect(v).toMatchObject({ cStat: '100', nProt: expect.stringMatching(/^\d{15}$/) });
    expect(v.protNFe).toContain(`<chNFe>${doc.key}</chNFe>`);
    const sent = sim.requests.slice(from);
    expect(sent.map((r) => [r.service, r.answered])).toEqual([
      ['NFeAutorizacao4', '103'],
      ['NFeRetAutorizacao4', '105'],
      ['NFeRetAutorizacao4', '104'],
    ]);
  });

  it('104 whose protNFe says 105 (lote em processamento): settled by consulting the key', async () => {
    sim.syncAnswer = 'infProt105';
    const from = sim.requests.length;
    const doc = nfce(a, 11);
    const v = await sefaz.authorizeNfe(a.company, doc.xml);
    expect(v.cStat).toBe('100');
    expect(sim.requests.slice(from).map((r) => r.service)).toEqual(['NFeAutorizacao4', 'NFeConsultaProtocolo4']);
  });

  it('an answer lost after the authority committed: the call fails as unavailable, the consultation finds the authorization', async () => {
    const impatient = connector({ timeoutMs: 400 });
    try {
      const doc = nfce(a, 12);
      sim.answerLate(1_500);
      await expect(impatient.authorizeNfe(a.company, doc.xml)).rejects.toBeInstanceOf(AuthorityUnavailableError);
      const known = await impatient.consultNfe(a.company, doc.key);
      expect(known).toMatchObject({ found: true, verdict: { cStat: '100' } });
      if (known.found) expect(known.verdict.protNFe).toContain(`<digVal>${doc.digestValue}</digVal>`);
    } finally {
      await impatient.close();
    }
  });

  it('204 (the same key again, its answer lost): consulted and recorded as the existing authorization', async () => {
    const doc = nfce(a, 13);
    const first = await sefaz.authorizeNfe(a.company, doc.xml);
    const from = sim.requests.length;
    const again = await sefaz.authorizeNfe(a.company, doc.xml);
    expect(again).toMatchObject({ cStat: '100', nProt: first.nProt });
    expect(sim.requests.slice(from).map((r) => [r.service, r.answered])).toEqual([
      ['NFeAutorizacao4', '104'],
      ['NFeConsultaProtocolo4', '100'],
    ]);
  });

  it('539 (the number under another key): the key it names is consulted and reported with the rejection', async () => {
    const first = nfce(a, 14, { cNF: '48271935' });
    const authorized = await sefaz.authorizeNfe(a.company, first.xml);
    const other = nfce(a, 14, { cNF: '73920461' });
    expect(other.key).not.toBe(first.key);
    const v = await sefaz.authorizeNfe(a.company, other.xml);
    expect(v.cStat).toBe('539');
    expect(v.duplicateOf).toEqual({ key: first.key, cStat: '100', xMotivo: 'Autorizado o uso da NF-e', nProt: authorized.nProt });
  });

  it('a 17-digit protocol (NT 2025.002) is taken as it comes', async () => {
    const longDir = mkdtempSync(join(tmpdir(), 'balcao-sefaz-17-'));
    const long = new SandboxAuthority({
      file: join(longDir, 'sefaz.sqlite'),
      settings: () => ({ latencyMs: 0, available: true }),
      clock: () => new Date(),
      nfeProtocolDigits: 17,
    });
    const sp = await SefazSimulator.start({ authority: long });
    const client = new SefazAuthority({ origin: sp.origin, extraCa: [sp.caPem] });
    try {
      sp.enroll(a.company);
      const doc = nfce(a, 15);
      const v = await client.authorizeNfe(a.company, doc.xml);
      expect(v.nProt).toMatch(/^\d{17}$/);
      expect(wrapNfeProc(doc.xml, v.protNFe)).toContain(`<nProt>${v.nProt}</nProt>`);
      const known = await client.consultNfe(a.company, doc.key);
      expect(known.found && known.verdict.nProt).toBe(v.nProt);
    } finally {
      await client.close();
      await sp.close();
      long.close();
      rmSync(longDir, { recursive: true, force: true });
    }
  });
});

describe('paralysed authority (108/109)', () => {
  it('108: unavailable; the authorizer is then left alone and only its status is asked, once per interval, until 107', async () => {
    let now = Date.now();
    const careful = connector({ now: () => now, statusIntervalMs: 60_000 });
    try {
      const b = newCompany();
      sim.enroll(b.company);
      sim.paralyse('108');
      const from = sim.requests.length;
      await expect(careful.authorizeNfe(b.company, nfce(b, 1).xml)).rejects.toThrow(/SEFAZ paralisada \(108/);
      for (let i = 0; i < 5; i++) await expect(careful.consultNfe(b.company, nfce(b, 1).key)).rejects.toBeInstanceOf(AuthorityUnavailableError);
      expect(sim.requests.slice(from).map((r) => r.service)).toEqual(['NFeAutorizacao4']);

      now += 61_000; // a minute later: one status query, still paralysed (109 now)
      sim.paralyse('109');
      await expect(careful.authorizeNfe(b.company, nfce(b, 2).xml)).rejects.toThrow(/109/);
      await expect(careful.authorizeNfe(b.company, nfce(b, 2).xml)).rejects.toThrow(/109/);
      expect(sim.requests.slice(from).map((r) => r.service)).toEqual(['NFeAutorizacao4', 'NFeStatusServico4']);

      now += 61_000;
      sim.paralyse(undefined);
      expect(await careful.authorizeNfe(b.company, nfce(b, 3).xml)).toMatchObject({ cStat: '100' });
      expect(sim.requests.slice(from).map((r) => r.service)).toEqual(['NFeAutorizacao4', 'NFeStatusServico4', 'NFeStatusServico4', 'NFeAutorizacao4']);
    } finally {
      await careful.close();
    }
  });

  it('the status service itself is asked at most once a minute: a second call gets the last answer', async () => {
    const from = sim.requests.length;
    const client = connector();
    try {
      expect(await client.status('nfe', a.company)).toMatchObject({ cStat: '107', cached: false });
      expect(await client.status('nfe', a.company)).toMatchObject({ cStat: '107', cached: true });
      expect(sim.requests.slice(from).filter((r) => r.service === 'NFeStatusServico4')).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe('consumo indevido (656)', () => {
  it('the same rejected NFC-e sent again and again: the connector stops long before SEFAZ would block the CNPJ', async () => {
    const c = newCompany();
    sim.enroll(c.company);
    const broken = nfce(c, 1, { cardWithoutGroup: true }).xml;
    const from = sim.requests.length;
    const answers: string[] = [];
    for (let i = 0; i < 40; i++) answers.push((await sefaz.authorizeNfe(c.company, broken)).cStat);
    const sent = sim.requests.slice(from).filter((r) => r.service === 'NFeAutorizacao4');
    expect(new Set(answers)).toEqual(new Set(['391']));
    expect(sent.length).toBeLessThanOrEqual(2);
    expect(sim.blocked(c.company.cnpj)).toBe(false);

    // The same number re-signed each time (new content, same key): capped per hour as well.
    const before = sim.requests.length;
    for (let i = 0; i < 40; i++) {
      const v = await sefaz.authorizeNfe(c.company, nfce(c, 2, { cNF: '58301947', cardWithoutGroup: true }).xml);
      expect(v.cStat).not.toBe('656');
    }
    const resent = sim.requests.slice(before).filter((r) => r.service === 'NFeAutorizacao4');
    expect(resent.length).toBeLessThan(30);
    expect(sim.blocked(c.company.cnpj)).toBe(false);
  });

  it('without the guard the simulator counts like SEFAZ: after 30 identical rejections of a document, 656', async () => {
    const c = newCompany();
    sim.enroll(c.company);
    const reckless = connector({ limits: { identicalRequest: 1_000, documentRejections: { documento: 1_000, evento: 1_000, inutilizacao: 1_000 } } });
    try {
      const doc = nfce(c, 1, { cardWithoutGroup: true });
      const answers: string[] = [];
      for (let i = 0; i < 32; i++) answers.push((await reckless.authorizeNfe(c.company, doc.xml)).cStat);
      expect(new Set(answers.slice(0, 31))).toEqual(new Set(['391']));
      expect(answers[31]).toBe('656');
      expect(sim.blocked(c.company.cnpj)).toBe(true);
    } finally {
      await reckless.close();
    }
  });
});
