import { describe, expect, it } from 'vitest';
import { buildAccessKey } from './access-key.ts';
import { generateTestCertificate } from './certificate.ts';
import { FieldError } from './errors.ts';
import {
  envEventoNFe,
  eventId,
  justification,
  mdfeCancellationEvent,
  mdfeClosingEvent,
  mdfeDfeInclusionEvent,
  mdfeDriverInclusionEvent,
  nfeCancellationEvent,
  nfeSubstitutionCancellationEvent,
  type EventAuthor,
} from './events.ts';
import { retEvento, wrapProcEventoMDFe, wrapProcEventoNFe } from './protocol.ts';
import { validateXml } from './schema.ts';
import { verifyXmlSignature } from './signature.ts';

const CNPJ = '11222333000181';
const { certificate } = generateTestCertificate({ cnpj: CNPJ, xNome: 'EMPRESA TESTE' });
const credentials = { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem };
const author: EventAuthor = { cnpj: CNPJ, environment: 'homologacao' };

const key = (model: '55' | '58' | '65', number: number, tpEmis = 1) =>
  buildAccessKey({ cUF: '35', yearMonth: '2611', cnpj: CNPJ, model, serie: 1, number, tpEmis, code: '40817263' });

const NFCE = key('65', 42);
const NFCE_OFFLINE = key('65', 43, 9);
const NFE = key('55', 7);
const MDFE = key('58', 123);
const dhEvento = '2026-11-22T14:20:00-03:00';
const xJust = 'Venda cancelada a pedido do cliente';
const verdict = {
  cStat: '135',
  xMotivo: 'Evento registrado e vinculado a NF-e',
  verAplic: 'SP_EVENTOS_PL_100',
  dhRegEvento: '2026-11-22T14:20:02-03:00',
  nProt: '135260000000077',
};

function issueField(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(FieldError);
    return (err as FieldError).field;
  }
  throw new Error('esperado FieldError');
}

describe('NF-e / NFC-e 110111 Cancelamento', () => {
  const evento = nfeCancellationEvent({ author, chNFe: NFCE, nProt: '135260000000042', xJust, dhEvento }, credentials);

  it('is a signed single evento; in an envEvento batch it validates against envEventoCancNFe', () => {
    expect(evento.startsWith('<evento xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.00">')).toBe(true);
    expect(validateXml(evento, 'eventoCancNFe')).toEqual({ valid: true, errors: [] });
    expect(validateXml(envEventoNFe([evento], 1), 'envEventoCancNFe')).toEqual({ valid: true, errors: [] });
    const check = verifyXmlSignature(evento);
    expect(check.valid && check.signedId).toBe(`ID110111${NFCE}01`);
  });

  it('carries the fields of the layout, in order', () => {
    expect(evento).toContain(
      `<infEvento Id="ID110111${NFCE}01"><cOrgao>35</cOrgao><tpAmb>2</tpAmb><CNPJ>${CNPJ}</CNPJ><chNFe>${NFCE}</chNFe>` +
        `<dhEvento>${dhEvento}</dhEvento><tpEvento>110111</tpEvento><nSeqEvento>1</nSeqEvento><verEvento>1.00</verEvento>` +
        `<detEvento versao="1.00"><descEvento>Cancelamento</descEvento><nProt>135260000000042</nProt><xJust>${xJust}</xJust></detEvento></infEvento>`,
    );
  });

  it('wrapped in procEventoNFe with its answer, validates against procEventoCancNFe and still verifies', () => {
    const proc = wrapProcEventoNFe(evento, retEvento(evento, verdict));
    expect(validateXml(proc, 'procEventoCancNFe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(proc).valid).toBe(true);
  });

  it('accepts an NF-e (55) key and a 17-digit protocol (SP, NT 2025.002)', () => {
    const e = nfeCancellationEvent({ author, chNFe: NFE, nProt: '13526000000000042', xJust, dhEvento, nSeqEvento: 2 }, credentials);
    expect(validateXml(envEventoNFe([e], '123456789012345'), 'envEventoCancNFe')).toEqual({ valid: true, errors: [] });
    expect(e).toContain(`Id="ID110111${NFE}02"`);
  });
});

describe('NFC-e 110112 Cancelamento por substituição', () => {
  const evento = nfeSubstitutionCancellationEvent(
    { author, chNFe: NFCE, chNFeRef: NFCE_OFFLINE, nProt: '135260000000042', xJust, verAplic: 'Balcao 0.1.0', dhEvento },
    credentials,
  );

  it('validates against envEventoCancSubst (batch) and verifies', () => {
    expect(validateXml(evento, 'eventoCancSubst')).toEqual({ valid: true, errors: [] });
    expect(validateXml(envEventoNFe([evento], 7), 'envEventoCancSubst')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(evento).valid).toBe(true);
  });

  it('has the detEvento of the layout, descEvento without accents', () => {
    expect(evento).toContain(
      `<detEvento versao="1.00"><descEvento>Cancelamento por substituicao</descEvento><cOrgaoAutor>35</cOrgaoAutor><tpAutor>1</tpAutor>` +
        `<verAplic>Balcao 0.1.0</verAplic><nProt>135260000000042</nProt><xJust>${xJust}</xJust><chNFeRef>${NFCE_OFFLINE}</chNFeRef></detEvento>`,
    );
    expect(evento).toContain(`Id="ID110112${NFCE}01"`);
  });

  it('procEventoNFe validates against procEventoCancSubst', () => {
    const proc = wrapProcEventoNFe(evento, retEvento(evento, verdict));
    expect(proc).toContain('<cOrgaoAutor>35</cOrgaoAutor><dhRegEvento>');
    expect(validateXml(proc, 'procEventoCancSubst')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(proc).valid).toBe(true);
  });

  it('refuses an NF-e (55) and a substitute equal to the cancelled one', () => {
    const base = { author, chNFeRef: NFCE_OFFLINE, nProt: '135260000000042', xJust, verAplic: '1', dhEvento };
    expect(issueField(() => nfeSubstitutionCancellationEvent({ ...base, chNFe: NFE }, credentials))).toBe('chave');
    expect(issueField(() => nfeSubstitutionCancellationEvent({ ...base, chNFe: NFCE, chNFeRef: NFCE }, credentials))).toBe('chave_substituta');
  });
});

describe('MDF-e events', () => {
  const canc = mdfeCancellationEvent({ author, chMDFe: MDFE, nProt: '941260000000123', xJust, dhEvento }, credentials);
  const enc = mdfeClosingEvent({ author, chMDFe: MDFE, nProt: '941260000000123', UF: 'BA', cMun: '2927408', dhEvento: '2026-11-23T01:30:00Z' }, credentials);
  const mdfeVerdict = { ...verdict, xMotivo: 'Evento registrado e vinculado a MDF-e', verAplic: 'SVRS-SANDBOX' };

  it('110111 validates against eventoMDFe (detEvento against evCancMDFe) and verifies', () => {
    expect(validateXml(canc, 'eventoMDFe')).toEqual({ valid: true, errors: [] });
    expect(canc).toContain(
      `<infEvento Id="ID110111${MDFE}01"><cOrgao>35</cOrgao><tpAmb>2</tpAmb><CNPJ>${CNPJ}</CNPJ><chMDFe>${MDFE}</chMDFe>` +
        `<dhEvento>${dhEvento}</dhEvento><tpEvento>110111</tpEvento><nSeqEvento>1</nSeqEvento><detEvento versaoEvento="3.00">` +
        `<evCancMDFe><descEvento>Cancelamento</descEvento><nProt>941260000000123</nProt><xJust>${xJust}</xJust></evCancMDFe></detEvento></infEvento>`,
    );
    expect(verifyXmlSignature(canc).valid).toBe(true);
  });

  it('110112 Encerramento: dtEnc defaults to the Brasília day of dhEvento; cUF and cMun of the arrival', () => {
    expect(validateXml(enc, 'eventoMDFe')).toEqual({ valid: true, errors: [] });
    expect(enc).toContain('<dhEvento>2026-11-22T22:30:00-03:00</dhEvento>');
    expect(enc).toContain(
      '<evEncMDFe><descEvento>Encerramento</descEvento><nProt>941260000000123</nProt><dtEnc>2026-11-22</dtEnc><cUF>29</cUF><cMun>2927408</cMun></evEncMDFe>',
    );
    expect(verifyXmlSignature(enc).valid).toBe(true);
  });

  it('procEventoMDFe wrappers validate and verify', () => {
    for (const e of [canc, enc]) {
      const proc = wrapProcEventoMDFe(e, retEvento(e, mdfeVerdict));
      expect(validateXml(proc, 'procEventoMDFe')).toEqual({ valid: true, errors: [] });
      expect(verifyXmlSignature(proc).valid).toBe(true);
    }
  });

  it('closing by a third party, with an explicit date', () => {
    const e = mdfeClosingEvent(
      { author, chMDFe: MDFE, nProt: '941260000000123', UF: 'BA', cMun: '2910800', dtEnc: '2026-11-24', encPorTerceiro: true, dhEvento },
      credentials,
    );
    expect(e).toContain('<dtEnc>2026-11-24</dtEnc><cUF>29</cUF><cMun>2910800</cMun><indEncPorTerceiro>1</indEncPorTerceiro>');
    expect(validateXml(e, 'eventoMDFe')).toEqual({ valid: true, errors: [] });
  });

  it('closing: municipality of another UF, unknown UF, bad date', () => {
    const base = { author, chMDFe: MDFE, nProt: '941260000000123', dhEvento };
    expect(issueField(() => mdfeClosingEvent({ ...base, UF: 'BA', cMun: '3550308' }, credentials))).toBe('codigo_municipio');
    expect(issueField(() => mdfeClosingEvent({ ...base, UF: 'XX', cMun: '2927408' }, credentials))).toBe('uf');
    expect(issueField(() => mdfeClosingEvent({ ...base, UF: 'BA', cMun: '2927408', dtEnc: '2026-02-30' }, credentials))).toBe('data');
  });

  it('110114 Inclusão de condutor and 110115 Inclusão de DF-e validate (detEvento against their own schemas), with their answer', () => {
    const condutor = mdfeDriverInclusionEvent({ author, chMDFe: MDFE, xNome: 'Maria  Souza', CPF: '11144477735', nSeqEvento: 2, dhEvento }, credentials);
    expect(condutor).toContain(`Id="ID110114${MDFE}02"`);
    expect(condutor).toContain(
      '<evIncCondutorMDFe><descEvento>Inclusao Condutor</descEvento><condutor><xNome>Maria Souza</xNome><CPF>11144477735</CPF></condutor></evIncCondutorMDFe>',
    );
    const dfe = mdfeDfeInclusionEvent(
      {
        author,
        chMDFe: MDFE,
        nProt: '941260000000123',
        cMunCarrega: '3106200',
        xMunCarrega: 'Belo Horizonte',
        infDoc: [{ cMunDescarga: '2927408', xMunDescarga: 'Salvador', chNFe: NFE }],
        dhEvento,
      },
      credentials,
    );
    expect(dfe).toContain(
      `<evIncDFeMDFe><descEvento>Inclusao DF-e</descEvento><nProt>941260000000123</nProt><cMunCarrega>3106200</cMunCarrega>` +
        `<xMunCarrega>Belo Horizonte</xMunCarrega><infDoc><cMunDescarga>2927408</cMunDescarga><xMunDescarga>Salvador</xMunDescarga><chNFe>${NFE}</chNFe></infDoc></evIncDFeMDFe>`,
    );
    for (const e of [condutor, dfe]) {
      expect(validateXml(e, 'eventoMDFe')).toEqual({ valid: true, errors: [] });
      expect(validateXml(wrapProcEventoMDFe(e, retEvento(e, mdfeVerdict)), 'procEventoMDFe')).toEqual({ valid: true, errors: [] });
      expect(verifyXmlSignature(e).valid).toBe(true);
    }
    // Content that breaks its schema is reported through eventoMDFe: a driver's name over 60 characters.
    expect(validateXml(condutor.replace('<xNome>Maria Souza</xNome>', `<xNome>${'M'.repeat(61)}</xNome>`), 'eventoMDFe').valid).toBe(false);
  });

  it('110114 / 110115 refuse a bad CPF, an NFC-e key among the documents, an unknown municipality, no documents', () => {
    expect(issueField(() => mdfeDriverInclusionEvent({ author, chMDFe: MDFE, xNome: 'Maria Souza', CPF: '11144477736' }, credentials))).toBe('cpf');
    expect(issueField(() => mdfeDriverInclusionEvent({ author, chMDFe: MDFE, xNome: 'M', CPF: '11144477735' }, credentials))).toBe('nome');
    const base = { author, chMDFe: MDFE, nProt: '941260000000123', cMunCarrega: '3106200', xMunCarrega: 'Belo Horizonte' };
    expect(
      issueField(() => mdfeDfeInclusionEvent({ ...base, infDoc: [{ cMunDescarga: '2927408', xMunDescarga: 'Salvador', chNFe: NFCE }] }, credentials)),
    ).toBe('documentos[0].chave');
    expect(
      issueField(() =>
        mdfeDfeInclusionEvent({ ...base, cMunCarrega: '9999998', infDoc: [{ cMunDescarga: '2927408', xMunDescarga: 'Salvador', chNFe: NFE }] }, credentials),
      ),
    ).toBe('codigo_municipio_carregamento');
    expect(issueField(() => mdfeDfeInclusionEvent({ ...base, infDoc: [] }, credentials))).toBe('documentos');
  });

  it('the MDF-e protocol has 15 digits; the key must be of an MDF-e', () => {
    expect(issueField(() => mdfeCancellationEvent({ author, chMDFe: MDFE, nProt: '94126000000012345', xJust }, credentials))).toBe('nProt');
    expect(issueField(() => mdfeCancellationEvent({ author, chMDFe: NFCE, nProt: '941260000000123', xJust }, credentials))).toBe('chave');
  });
});

describe('bad input → FieldError', () => {
  const base = { author, chNFe: NFCE, nProt: '135260000000042', dhEvento };

  it.each([
    ['too short', 'curta demais'],
    ['too long', 'x'.repeat(256)],
    ['blank', '                    '],
    ['outside Latin-1', 'Cliente desistiu 😀 da compra'],
  ])('justification %s → justificativa', (_label, bad) => {
    expect(issueField(() => nfeCancellationEvent({ ...base, xJust: bad }, credentials))).toBe('justificativa');
    expect(issueField(() => mdfeCancellationEvent({ author, chMDFe: MDFE, nProt: '941260000000123', xJust: bad }, credentials))).toBe('justificativa');
  });

  it('justification: blanks collapsed, 15 and 255 characters accepted', () => {
    expect(justification('  Erro\n\nde   digitação  ')).toBe('Erro de digitação');
    expect(justification('a'.repeat(15))).toHaveLength(15);
    expect(justification('ç'.repeat(255))).toHaveLength(255);
  });

  it.each([
    ['malformed', '3526111122233300018165001000000042140817263'],
    ['wrong check digit', NFCE.slice(0, 43) + ((Number(NFCE[43]) + 1) % 10)],
    ['not a string', 12345],
  ])('%s key → chave', (_label, bad) => {
    expect(issueField(() => nfeCancellationEvent({ ...base, chNFe: bad as string, xJust }, credentials))).toBe('chave');
  });

  it('protocol of 16 digits → nProt; nSeqEvento out of range', () => {
    expect(issueField(() => nfeCancellationEvent({ ...base, nProt: '1352600000000421', xJust }, credentials))).toBe('nProt');
    expect(issueField(() => nfeCancellationEvent({ ...base, xJust, nSeqEvento: 21 }, credentials))).toBe('nSeqEvento');
  });

  it('reports every problem at once, and never returns half an event', () => {
    try {
      nfeCancellationEvent({ ...base, chNFe: 'x', nProt: '1', xJust: 'curta' }, credentials);
      expect.unreachable();
    } catch (err) {
      expect((err as FieldError).issues.map((i) => i.field)).toEqual(['chave', 'nProt', 'justificativa']);
    }
  });

  it('eventId pads nSeqEvento to 2 digits', () => {
    expect(eventId('110111', MDFE, 3)).toBe(`ID110111${MDFE}03`);
    expect(eventId('110111', MDFE, 3)).toMatch(/^ID[0-9]{52}$/);
  });
});
