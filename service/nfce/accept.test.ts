import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate, type Certificate } from '../../fiscal/certificate.ts';
import { issueNfce } from '../../fiscal/nfce/build.ts';
import { demoEmitter, sampleNfceRequest } from '../../fiscal/samples.ts';
import { Companies, createCompany, updateCompany } from '../companies.ts';
import { ApiError } from '../http/errors.ts';
import { openService, type OpenedService } from '../open-service.ts';
import type { ReplacedCertificate } from '../store.ts';
import { acceptContingency, signingCertificateRefusal } from './accept.ts';
import { authorizingIssuer } from '../queue/issuer.ts';

const CNPJ = '11222333000181';

const certificate = (xNome: string, notBefore: Date, notAfter: Date): Certificate =>
  generateTestCertificate({ cnpj: CNPJ, xNome, notBefore, notAfter, password: 'senha-de-teste' }).certificate;

describe("signingCertificateRefusal: the certificate was the company's when the receipt was signed", () => {
  const validFrom = new Date('2025-11-25T12:00:00.000Z');
  const validTo = new Date('2026-11-25T12:00:00.000Z');
  const old = certificate('CERTIFICADO DE 2025', validFrom, validTo);
  const current = certificate('CERTIFICADO DE 2026', new Date('2026-11-20T00:00:00.000Z'), new Date('2027-11-20T00:00:00.000Z'));
  const stranger = certificate('CERTIFICADO ALHEIO', validFrom, validTo);

  const replacedAt = (at: string, over: Partial<ReplacedCertificate> = {}): ReplacedCertificate => ({
    sha256: old.fingerprint256,
    notBefore: validFrom.toISOString(),
    notAfter: validTo.toISOString(),
    replacedAt: at,
    ...over,
  });
  const company = (replaced: ReplacedCertificate[]) => ({ certificate: current, replacedCertificates: replaced });
  const judge = (signer: Certificate, dhEmi: string, replaced: ReplacedCertificate[]) =>
    signingCertificateRefusal(signer.certificatePem, dhEmi, company(replaced));

  // Replaced at 09:00:00.500 in Brasília (12:00:00.500Z).
  const renewal = [replacedAt('2026-11-24T12:00:00.500Z')];

  it('the current certificate, whatever the date', () => {
    expect(judge(current, '2026-11-24T08:00:00-03:00', renewal)).toBeUndefined();
    expect(judge(current, '2026-11-19T08:00:00-03:00', [])).toBeUndefined();
  });

  it('a replaced certificate for a receipt dated before its replacement, within its validity', () => {
    expect(judge(old, '2026-11-24T08:59:59-03:00', renewal)).toBeUndefined();
    expect(judge(old, '2025-11-25T09:00:00-03:00', renewal)).toBeUndefined(); // notBefore itself
    // dhEmi has whole seconds: 09:00:00 may have been signed up to 09:00:00.999, and is still
    // taken as before a replacement at 09:00:00.500 rather than refuse one signed before it.
    expect(judge(old, '2026-11-24T09:00:00-03:00', renewal)).toBeUndefined();
  });

  it('refuses a replaced certificate for a receipt dated at or after its replacement, naming when it was replaced', () => {
    expect(judge(old, '2026-11-24T09:00:01-03:00', renewal)).toBe(
      'assinada com um certificado que a empresa substituiu em 2026-11-24T09:00:00-03:00, mas emitida depois disso ' +
        '(dhEmi 2026-11-24T09:00:01-03:00): uma NFC-e emitida após a substituição deve ser assinada com o certificado atual',
    );
    // Exactly at the replacement: no longer the company's.
    expect(judge(old, '2026-11-24T09:00:00-03:00', [replacedAt('2026-11-24T12:00:00.000Z')])).toMatch(/substituiu em 2026-11-24T09:00:00-03:00/);
  });

  it('refuses a replaced certificate that was not valid when the receipt was signed', () => {
    const late = [replacedAt('2026-11-26T12:00:00.000Z')]; // kept past its expiry
    expect(judge(old, '2026-11-25T09:00:01-03:00', late)).toBe(
      'assinada com um certificado anterior da empresa que não era válido na emissão (dhEmi 2026-11-25T09:00:01-03:00; ' +
        'validade de 2025-11-25T09:00:00-03:00 a 2026-11-25T09:00:00-03:00)',
    );
    expect(judge(old, '2025-11-25T08:59:59-03:00', renewal)).toMatch(/não era válido na emissão/);
  });

  it("refuses, as before, a certificate that was never the company's", () => {
    expect(judge(stranger, '2026-11-24T08:00:00-03:00', renewal)).toBe('assinada com um certificado que não é o certificado digital cadastrado para a empresa');
  });

  it('a certificate the company took back after replacing it counts until its last replacement', () => {
    const other = replacedAt('2026-11-24T13:00:00.000Z', { sha256: 'AA:BB' });
    const history = [replacedAt('2026-11-24T12:00:00.000Z'), other, replacedAt('2026-11-24T14:00:00.000Z')];
    expect(judge(old, '2026-11-24T10:30:00-03:00', history)).toBeUndefined();
    expect(judge(old, '2026-11-24T11:00:00-03:00', history)).toMatch(/substituiu em 2026-11-24T11:00:00-03:00/);
  });
});

describe('acceptContingency across a renewal made with updateCompany (real SQLite)', () => {
  let dir: string;
  let opened: OpenedService;
  let companies: Companies;
  let companyId: string;
  let first: ReturnType<typeof generateTestCertificate>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-accept-'));
    opened = await openService(dir, {});
    companies = new Companies(opened);
    first = generateTestCertificate({
      cnpj: CNPJ,
      xNome: 'LOJA DA CONTINGENCIA',
      password: 'senha-2025',
      notBefore: new Date(Date.now() - 300 * 24 * 3600_000),
    });
    ({ companyId } = await createCompany(opened, {
      cnpj: CNPJ,
      uf: 'SP',
      nome: 'LOJA DA CONTINGENCIA',
      cscId: '000001',
      csc: 'CSC-DA-LOJA',
      certificate: { pfx: first.pfx, password: 'senha-2025' },
    }));
  });

  afterAll(async () => {
    await opened?.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A receipt the terminal signed offline with `signer` at `dhEmi`. */
  const offline = (nNF: number, signer: Certificate, dhEmi: Date) =>
    issueNfce(sampleNfceRequest({ nNF }), {
      emitter: demoEmitter({ cnpj: CNPJ }),
      credentials: signer,
      dhEmi,
      tpEmis: 9,
      contingency: { dhCont: new Date(dhEmi.getTime() - 60_000), xJust: 'Sem conexao com a internet no caixa da loja' },
    });

  const refusalOf = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('validacao');
      return (err as ApiError).options.details![0]!.message;
    }
    throw new Error('expected a refusal');
  };

  it('accepts a receipt signed with the replaced certificate before the renewal, refuses one signed after it', async () => {
    const signedBefore = offline(1, first.certificate, new Date(Date.now() - 10 * 60_000));
    const renewed = generateTestCertificate({ cnpj: CNPJ, xNome: 'LOJA DA CONTINGENCIA', password: 'senha-2026' });
    const { company } = await updateCompany(opened, companyId, { certificate: { pfx: renewed.pfx, password: 'senha-2026' } });

    const issuer = await authorizingIssuer({ companies }, companyId, new Date());
    expect(issuer.certificate.fingerprint256).toBe(renewed.certificate.fingerprint256);
    const accepted = acceptContingency(signedBefore.xml, issuer, 'doc-1');
    expect(accepted).toMatchObject({ chave: signedBefore.key, tpEmis: 9, contingencia: true, receivedXml: signedBefore.xml });

    const signedAfter = offline(2, first.certificate, new Date(Date.parse(company.updatedAt) + 1000));
    expect(refusalOf(() => acceptContingency(signedAfter.xml, issuer, 'doc-2'))).toMatch(
      /^assinada com um certificado que a empresa substituiu em .*, mas emitida depois disso/,
    );
    // The renewed certificate signs from now on, as always.
    expect(acceptContingency(offline(3, renewed.certificate, new Date()).xml, issuer, 'doc-3').chave).toHaveLength(44);
    const stranger = generateTestCertificate({ cnpj: CNPJ, xNome: 'OUTRO CERTIFICADO' }).certificate;
    expect(refusalOf(() => acceptContingency(offline(4, stranger, new Date()).xml, issuer, 'doc-4'))).toBe(
      'assinada com um certificado que não é o certificado digital cadastrado para a empresa',
    );
  });
});
