import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalizeById, canonicalizeDocument, DSIG_NS } from './c14n.ts';
import { generateTestCertificate } from './certificate.ts';
import { mdfeCancellationEvent, mdfeClosingEvent, nfeCancellationEvent, nfeSubstitutionCancellationEvent } from './events.ts';
import { buildInutilizacao } from './inutilizacao.ts';
import { buildMdfe } from './mdfe/build.ts';
import { buildNfce } from './nfce/build.ts';
import { demoEmitter, sampleMdfeRequest, sampleNfceRequest } from './samples.ts';
import { fixturePath } from './testdata/fixtures.ts';
import { fastVerifyXmlSignature, signWithXmlCrypto, signXml, verifyWithXmlCrypto, verifyXmlSignature } from './signature.ts';

const credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'MERCADO BALCAO' }).certificate;
const sigParts = (xml: string) => ({
  digest: /<DigestValue>([^<]+)/.exec(xml)?.[1],
  value: /<SignatureValue>([^<]+)/.exec(xml)?.[1],
  cert: /<X509Certificate>([^<]+)/.exec(xml)?.[1],
});

describe('canonicalizeById', () => {
  it('declares the inherited default namespace, sorts attributes, normalizes escapes, expands empty elements', () => {
    const xml =
      '<R xmlns="urn:a"><x/><E versao="1" Id="ID1" b="&#39;q&#39;"><t>a &quot;b&quot; &amp; &lt;c&gt; d&#39;</t><e/><k xmlns="urn:a">1</k><o xmlns="urn:b"/></E></R>';
    expect(canonicalizeById(xml, 'ID1')).toBe(
      '<E xmlns="urn:a" Id="ID1" b="\'q\'" versao="1"><t>a "b" &amp; &lt;c&gt; d\'</t><e></e><k>1</k><o xmlns="urn:b"></o></E>',
    );
  });

  it.each([
    ['a comment', '<R><E Id="X"><!-- c --></E></R>'],
    ['CDATA', '<R><E Id="X"><![CDATA[x]]></E></R>'],
    ['a prefixed attribute', '<R><E Id="X" xsi:type="t"/></R>'],
    ['an enveloped signature already inside', '<R><E Id="X"><Signature/></E></R>'],
    ['no element with that Id', '<R><E Id="Y"/></R>'],
    ['a twin carrying the Id', '<R><E Id="X"/><F ID="X"/></R>'],
    ['a processing instruction', '<R><?pi x?><E Id="X"/></R>'],
    ['a DOCTYPE', '<!DOCTYPE R><R><E Id="X"/></R>'],
    // Well-formed spellings that xmldom 0.8 (the reference's parser) misreads in some positions.
    ['single quotes', "<R><E Id='X'/></R>"],
    ['two spaces between attributes', '<R><E  Id="X"/></R>'],
    ['a blank before >', '<R><E Id="X" >t</E></R>'],
    ['a tab in an end tag', '<R><E Id="X">t</E\t></R>'],
    ['a line break in an attribute value', '<R><E Id="X" a="1\n2"/></R>'],
    ['a carriage return in text', '<R><E Id="X">a\r\nb</E></R>'],
    ['a control character', '<R><E Id="X">\u0001</E></R>'],
    ['a reference to a non-character', '<R><E Id="X">&#0;</E></R>'],
    ['an undefined entity', '<R><E Id="X">&nbsp;</E></R>'],
    ['a bare ampersand', '<R><E Id="X">a & b</E></R>'],
    ['text after the root', '<R><E Id="X"/></R>x'],
    ['mismatched tags', '<R><E Id="X"></F></R>'],
    ['a duplicate attribute', '<R><E Id="X" a="1" a="2"/></R>'],
  ])('declines %s, leaving it to xml-crypto', (_label, xml) => {
    expect(canonicalizeById(xml, 'X')).toBeUndefined();
  });

  it('reads past a BOM and an XML declaration, and decodes character references', () => {
    const xml = '\uFEFF<?xml version="1.0" encoding="UTF-8"?>\n<R xmlns="urn:a"><E Id="X" v="4&#x2E;00">&#50;&#9;&#13;</E></R>';
    expect(canonicalizeById(xml, 'X')).toBe('<E xmlns="urn:a" Id="X" v="4.00">2\t&#xD;</E>');
  });
});

describe('canonicalizeDocument', () => {
  const signature = (inner: string) => `<Signature xmlns="${DSIG_NS}">${inner}</Signature>`;
  const profile = (keyInfo = '<KeyInfo><X509Data><X509Certificate>Q0VS\nVA==</X509Certificate></X509Data></KeyInfo>') =>
    signature(`<SignedInfo><Reference URI="#X"/></SignedInfo><SignatureValue>U0lH</SignatureValue>${keyInfo}`);

  it('also canonicalizes SignedInfo in the xmldsig namespace it inherits, and reads the values', () => {
    const doc = canonicalizeDocument(`<R xmlns="urn:a"><E Id="X">1</E>${profile()}</R>`, 'X');
    expect(doc).toEqual({
      element: '<E xmlns="urn:a" Id="X">1</E>',
      elementName: 'E',
      signatures: 1,
      signature: {
        signedInfo: `<SignedInfo xmlns="${DSIG_NS}"><Reference URI="#X"></Reference></SignedInfo>`,
        signatureValue: 'U0lH',
        certificate: 'Q0VS\nVA==',
      },
    });
  });

  it.each([
    ['two signatures', `${profile()}${profile()}`],
    ['a KeyValue beside the certificate', profile('<KeyInfo><KeyValue/><X509Data><X509Certificate>Q0VS</X509Certificate></X509Data></KeyInfo>')],
    ['a certificate chain', profile('<KeyInfo><X509Data><X509Certificate>Q0VS</X509Certificate><X509Certificate>Q0VS</X509Certificate></X509Data></KeyInfo>')],
    [
      'an Object',
      signature('<SignedInfo/><SignatureValue>U0lH</SignatureValue><KeyInfo><X509Data><X509Certificate>Q0VS</X509Certificate></X509Data></KeyInfo><Object/>'),
    ],
    [
      'children out of order',
      signature('<SignatureValue>U0lH</SignatureValue><SignedInfo/><KeyInfo><X509Data><X509Certificate>Q0VS</X509Certificate></X509Data></KeyInfo>'),
    ],
    [
      'a reference in the value',
      signature('<SignedInfo/><SignatureValue>U0&#108;H</SignatureValue><KeyInfo><X509Data><X509Certificate>Q0VS</X509Certificate></X509Data></KeyInfo>'),
    ],
    ['a child in another namespace', profile('<KeyInfo><X509Data><X509Certificate xmlns="urn:x">Q0VS</X509Certificate></X509Data></KeyInfo>')],
  ])('reports no signature parts for %s', (_label, sig) => {
    const doc = canonicalizeDocument(`<R><E Id="X">1</E>${sig}</R>`, 'X');
    expect(doc?.element).toBe('<E Id="X">1</E>');
    expect(doc?.signature).toBeUndefined();
  });
});

describe('fast signer = xml-crypto, byte for byte', () => {
  const emitter = demoEmitter();
  const author = { cnpj: emitter.cnpj, environment: emitter.environment };
  const nfce = buildNfce(sampleNfceRequest({ nNF: 9, items: 7 }), { emitter, dhEmi: '2026-11-22T10:00:00-03:00', tpEmis: 1 });
  const nfceWithQuotes = buildNfce(
    { ...sampleNfceRequest({ nNF: 10 }), infCpl: `Troca em 7 dias & "sem" <custo> d'água` },
    { emitter, dhEmi: '2026-11-22T10:00:00-03:00', tpEmis: 9, contingency: { dhCont: '2026-11-22T09:00:00-03:00', xJust: 'Internet fora do ar desde as 9h' } },
  );
  const mdfe = buildMdfe(sampleMdfeRequest({ nMDF: 3 }), { emitter: demoEmitter({ crt: 3 }), dhEmi: '2026-11-22T10:00:00-03:00' });
  const key65 = nfce.key;
  // Events and inutilização come signed from their builders; strip the signature to re-sign.
  const unsign = (xml: string) => xml.replace(/<Signature xmlns=.*<\/Signature>/, '');
  const cases: [string, string][] = [
    ['NFC-e', nfce.xml],
    ['NFC-e with quotes, ampersands and contingency', nfceWithQuotes.xml],
    ['MDF-e', mdfe.xml],
    ['NF-e cancellation', unsign(nfeCancellationEvent({ author, chNFe: key65, nProt: '135260000000001', xJust: 'Cliente desistiu da compra' }, credentials))],
    [
      'NFC-e substitution',
      unsign(
        nfeSubstitutionCancellationEvent(
          { author, chNFe: key65, chNFeRef: nfceWithQuotes.key, nProt: '135260000000001', xJust: 'Venda emitida em contingência', verAplic: 'balcao-1' },
          credentials,
        ),
      ),
    ],
    [
      'MDF-e cancellation',
      unsign(mdfeCancellationEvent({ author, chMDFe: mdfe.key, nProt: '958260000000001', xJust: 'Viagem cancelada pelo cliente' }, credentials)),
    ],
    [
      'MDF-e closing',
      unsign(mdfeClosingEvent({ author, chMDFe: mdfe.key, nProt: '958260000000001', UF: 'BA', cMun: '2927408', dtEnc: '2026-11-23' }, credentials)),
    ],
    [
      'inutilização',
      unsign(
        buildInutilizacao({ emitter, ano: '26', serie: 1, nNFIni: 5, nNFFin: 7, xJust: 'Números pulados por falha do sistema', model: '65' }, credentials),
      ),
    ],
    [
      'the real BA fixture',
      readFileSync(fixturePath('sped-nfe_nfce_com_qrcode_minified_realsig.xml'), 'utf8')
        .trim()
        .replace(/<infNFeSupl>.*<\/infNFeSupl>/, '')
        .replace(/<Signature .*<\/Signature>/, ''),
    ],
  ];

  it.each(cases)('%s', (_label, unsigned) => {
    expect(unsigned).not.toContain('<Signature');
    const id = /\bId="([^"]+)"/.exec(unsigned)![1]!;
    expect(canonicalizeById(unsigned, id), 'fast path taken').toBeDefined();
    const fast = signXml(unsigned, credentials);
    const reference = signWithXmlCrypto(unsigned, /<(inf\w+) /.exec(unsigned)![1]!, credentials);
    expect(sigParts(fast)).toEqual(sigParts(reference));
    // And the fast verifier vouches for it, with the reference verifier's very result.
    const verified = fastVerifyXmlSignature(fast);
    expect(verified, 'fast verification').toMatchObject({ valid: true, digestValue: sigParts(fast).digest });
    expect(verifyWithXmlCrypto(fast)).toEqual(verified);
  });

  it('falls back to xml-crypto outside the subset, and the signature still verifies', () => {
    const withComment = nfce.xml.replace('<det ', '<!-- gerado pelo Balcão --><det ');
    const signed = signXml(withComment, credentials);
    expect(verifyXmlSignature(signed)).toMatchObject({ valid: true });
  });
});
