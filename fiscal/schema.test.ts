import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { XmlDocument, XsdValidator, diag } from 'libxml2-wasm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ACCESS_KEY_PATTERN } from '../base/common/access-key.ts';
import { SchemaError, assertValidXml, precompileSchemas, schemaFile, schemaNames, validateXml, type SchemaName } from './schema.ts';
import { fixturePath } from './testdata/fixtures.ts';

const NS_NFE = 'http://www.portalfiscal.inf.br/nfe';
const NS_MDFE = 'http://www.portalfiscal.inf.br/mdfe';

const fixture = (name: string): string => readFileSync(fixturePath(name), 'utf8');

const NFCE_BA = 'nfce_tpEmis1_qrV3_online_signed_testcert.xml'; // single line
const NFCE_RS = 'sped-nfe_exemplo_xml_envia_lote_modelo_65.xml'; // pretty-printed, nNF on line 9
const NFE_CANC = 'sped-nfe_envEvento_110111_cancelamento.xml';
const NFE_SUBST = 'sped-nfe_envEvento_110112_cancSubst.xml';
const MDFE_CANC = 'mdfe_evento_110111_cancelamento_signed_testcert.xml';
const MDFE_ENC = 'mdfe_evento_110112_encerramento_signed_testcert.xml';

/** Replaces exactly one occurrence, so a mutation that silently misses fails the test instead. */
function mutate(xml: string, from: string | RegExp, to: string): string {
  const hits = typeof from === 'string' ? xml.split(from).length - 1 : (xml.match(new RegExp(from, 'g')) ?? []).length;
  expect(hits, `mutação ${String(from)}`).toBe(1);
  return xml.replace(from, to);
}

const expectInvalid = (xml: string, schema: SchemaName): string[] => {
  const r = validateXml(xml, schema);
  expect(r.valid).toBe(false);
  expect(r.errors.length).toBeGreaterThan(0);
  return r.errors;
};

const expectValid = (xml: string, schema: SchemaName): void => {
  expect(validateXml(xml, schema)).toEqual({ valid: true, errors: [] });
};

type SchemaManifest = {
  packages: Record<string, { source: string }>;
  files: Record<string, { sha256: string; source?: string; patch?: { officialSha256: string; replace: string; with: string } }>;
};

describe('schema files: each is the official one recorded in fiscal/schemas/manifest.json, or differs from it only by its patch', () => {
  const root = new URL('./schemas/', import.meta.url);
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', root), 'utf8')) as SchemaManifest;
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  const onDisk = Object.keys(manifest.packages).flatMap((pkg) =>
    readdirSync(new URL(`${pkg}/`, root))
      .filter((f) => f.endsWith('.xsd'))
      .map((f) => `${pkg}/${f}`),
  );

  it('lists every file of the packages, no more, each with its SHA-256', () => {
    expect(onDisk.sort()).toEqual(Object.keys(manifest.files).sort());
    for (const file of onDisk) expect(sha256(readFileSync(new URL(file, root))), file).toBe(manifest.files[file]!.sha256);
  });

  it('a patched file holds its new pattern once, and undoing it gives back the official file', () => {
    const patched = Object.entries(manifest.files).filter(([, f]) => f.patch);
    expect(patched.map(([file]) => file).sort()).toEqual([
      'mdfe/PL_MDFe_300a/mdfeTiposBasico_v3.00.xsd',
      'nfe/PL_010_V1.30/leiauteEventoCancNFe_v1.00.xsd',
      'nfe/PL_010_V1.30/leiauteEventoCancSubst_v1.00.xsd',
    ]);
    for (const [file, { patch }] of patched) {
      const text = readFileSync(new URL(file, root), 'latin1');
      expect(text.split(patch!.with).length - 1, file).toBe(1);
      expect(text.includes(patch!.replace), file).toBe(false);
      expect(sha256(Buffer.from(text.replace(patch!.with, patch!.replace), 'latin1')), file).toBe(patch!.officialSha256);
    }
  });

  it('the patches take a key with letters in its CNPJ, and still refuse lower case', () => {
    const key = '35261212ABC34501DE35650010000000011000000011'; // form only: the schema does not check the digit
    const alpha = (xml: string, k: string) =>
      mutate(mutate(xml, new RegExp(`(?<=Id="ID11011[12])${ACCESS_KEY_PATTERN}`), k), new RegExp(`(?<=<chNFe>)${ACCESS_KEY_PATTERN}(?=<)`), k);
    expectValid(alpha(fixture(NFE_CANC), key), 'envEventoCancNFe');
    expectValid(alpha(fixture(NFE_SUBST), key), 'envEventoCancSubst');
    expect(expectInvalid(alpha(fixture(NFE_CANC), key.toLowerCase()), 'envEventoCancNFe').join('\n')).toMatch(/Id|chNFe/);
  });
});

describe('fixtures give the result stated in fixtures/xml/README.md', () => {
  const valid: [string, SchemaName][] = [
    ['sped-nfe_nfce_com_qrcode_minified_realsig.xml', 'nfe'],
    [NFCE_RS, 'nfe'],
    ['nfce_tpEmis1_qrV2_online_signed_testcert.xml', 'nfe'],
    [NFCE_BA, 'nfe'],
    ['nfce_tpEmis9_qrV2_offline_signed_testcert.xml', 'nfe'],
    ['nfce_tpEmis9_qrV3_offline_signed_testcert.xml', 'nfe'],
    [NFE_CANC, 'envEventoCancNFe'],
    [NFE_SUBST, 'envEventoCancSubst'],
    [MDFE_CANC, 'eventoMDFe'],
    [MDFE_ENC, 'eventoMDFe'],
  ];
  it.each(valid)('%s validates against %s', (file, schema) => {
    expectValid(fixture(file), schema);
    expect(() => assertValidXml(fixture(file), schema)).not.toThrow();
  });

  it('the MDF-e events detEvento content validates on its own against evCancMDFe / evEncMDFe', () => {
    for (const [file, el] of [
      [MDFE_CANC, 'evCancMDFe'],
      [MDFE_ENC, 'evEncMDFe'],
    ] as const) {
      const content = new RegExp(`<${el}>.*</${el}>`).exec(fixture(file))?.[0];
      expect(content).toBeDefined();
      expectValid(content!.replace(`<${el}>`, `<${el} xmlns="${NS_MDFE}">`), el);
    }
  });

  it('the road MDF-e shape reference fails mdfe_v3.00.xsd with the 8 anonymisation errors, and its rodo too', () => {
    const all = expectInvalid(fixture('nfelib_mdfe_rodo_pagto_PIX_ANONYMIZED_INVALID.xml'), 'mdfe');
    // The README counts xmllint's errors against mdfe_v3.00.xsd alone; we also validate the road
    // modal inside infModal, where the anonymised 13-digit infPag CNPJ fails once more.
    const errors = all.filter((e) => !e.startsWith('infModal '));
    expect(all.filter((e) => e.startsWith('infModal (mdfeModalRodoviario_v3.00.xsd): '))).toHaveLength(1);
    expect(errors).toHaveLength(8);
    expect(errors[0]).toMatch(/^linha 10: Element '\{http:\/\/www\.portalfiscal\.inf\.br\/mdfe\}nMDF': \[facet 'pattern'\]/);
    expect(errors.filter((e) => e.includes('}CNPJ'))).toHaveLength(3);
    expect(errors.some((e) => e.includes('}CEP'))).toBe(true);
    expect(errors.some((e) => e.includes('infMDFeSupl'))).toBe(true);
  });

  it('the namespace-less procMDFe skeleton fails procMDFe_v3.00.xsd on its root', () => {
    const errors = expectInvalid(fixture('sped-mdfe_procMDFe_skeleton_NO_NAMESPACE.xml'), 'procMDFe');
    expect(errors[0]).toContain('elemento raiz mdfeProc');
    expect(errors[0]).toContain(`{${NS_MDFE}}mdfeProc`);
  });
});

describe('NFC-e document', () => {
  it('nNF turned into letters is invalid and the error names nNF and the pattern facet', () => {
    const errors = expectInvalid(mutate(fixture(NFCE_BA), '<nNF>165439</nNF>', '<nNF>ABC</nNF>'), 'nfe');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^linha 1: Element '\{http:\/\/www\.portalfiscal\.inf\.br\/nfe\}nNF': \[facet 'pattern'\] The value 'ABC'/);
  });

  it('errors carry the line of the offending element in a pretty-printed document', () => {
    const errors = expectInvalid(mutate(fixture(NFCE_RS), '<nNF>240</nNF>', '<nNF>X1</nNF>'), 'nfe');
    expect(errors[0]).toMatch(/^linha 9: Element '\{[^}]+\}nNF'/);
  });

  it('a required element removed is invalid and the message names it', () => {
    const errors = expectInvalid(mutate(fixture(NFCE_BA), /<vNF>[^<]*<\/vNF>/, ''), 'nfe');
    expect(errors.join('\n')).toContain(`{${NS_NFE}}vNF`);
  });

  it('an element out of the layout order is invalid', () => {
    const xml = fixture(NFCE_BA);
    const serie = /<serie>[^<]*<\/serie>/.exec(xml)![0];
    const reordered = mutate(mutate(xml, serie, ''), /<nNF>[^<]*<\/nNF>/, `$&${serie}`);
    expect(expectInvalid(reordered, 'nfe')[0]).toMatch(/nNF': This element is not expected\. Expected is \( \{[^}]+\}serie \)/);
  });

  it('the same document wrapped in nfeProc with a protocol validates against procNFe', () => {
    const prot =
      '<protNFe versao="4.00"><infProt><tpAmb>2</tpAmb><verAplic>BA_4.00</verAplic>' +
      '<chNFe>29181033657677000156650010001654391001654392</chNFe><dhRecbto>2018-10-11T07:28:20-03:00</dhRecbto>' +
      '<nProt>129180000000001</nProt><digVal>m9ZrQTKMxv7A1Blnf/nmNGVX+N8=</digVal><cStat>100</cStat>' +
      '<xMotivo>Autorizado o uso da NF-e</xMotivo></infProt></protNFe>';
    const proc = `<nfeProc xmlns="${NS_NFE}" versao="4.00">${fixture(NFCE_BA)}${prot}</nfeProc>`;
    expectValid(proc, 'procNFe');
    // PL_010 takes the reform's 4-digit codes (1115...), not 5.
    expectValid(proc.replace('<cStat>100</cStat>', '<cStat>1115</cStat>'), 'procNFe');
    expectInvalid(proc.replace('<cStat>100</cStat>', '<cStat>10000</cStat>'), 'procNFe');
    // The bare NFe is not an nfeProc, and vice versa.
    expect(validateXml(fixture(NFCE_BA), 'procNFe').errors[0]).toContain('elemento raiz');
    expect(validateXml(proc, 'nfe').errors[0]).toContain('elemento raiz');
  });

  it('a root element other than NFe is rejected even where the schema set would accept it', () => {
    // nfe_v4.00.xsd imports xmldsig, so libxml2 alone accepts a lone ds:Signature as a document.
    const signature = /<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">.*<\/Signature>/.exec(fixture(NFCE_BA))![0];
    const errors = expectInvalid(signature, 'nfe');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('elemento raiz {http://www.w3.org/2000/09/xmldsig#}Signature');
    expect(expectInvalid(fixture(MDFE_CANC), 'nfe')[0]).toContain(`{${NS_MDFE}}eventoMDFe`);
    expect(expectInvalid('<NFe><a/></NFe>', 'nfe')[0]).toContain('elemento raiz NFe');
  });
});

describe('not well-formed input', () => {
  it.each([
    ['truncated', (x: string) => x.slice(0, x.length - 20), /XML malformado: .+/],
    ['tag mismatch', (x: string) => x.replace('</nNF>', '</nnf>'), /linha 1: XML malformado: .*nNF/],
    ['empty', () => '', /XML malformado/],
    ['not XML', () => 'não é XML', /XML malformado: .+/],
    ['two roots', (x: string) => x + x, /XML malformado: .*(Extra content|junk)/i],
  ])('%s → valid false with the parser message, no throw', (_label, make, message) => {
    const errors = expectInvalid(make(fixture(NFCE_BA)), 'nfe');
    expect(errors[0]).toMatch(message);
  });

  it('every proper prefix of a valid document is invalid and never throws', () => {
    const xml = fixture(MDFE_CANC);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: xml.length - 1 }), (n) => {
        const r = validateXml(xml.slice(0, n), 'eventoMDFe');
        return r.valid === false && r.errors.length > 0;
      }),
      { numRuns: 150 },
    );
  });

  it('arbitrary strings never throw', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        const r = validateXml(s, 'nfe');
        return typeof r.valid === 'boolean' && (r.valid || r.errors.length > 0);
      }),
      { numRuns: 200 },
    );
  });

  it('a DOCTYPE is refused, with internal or external entities, instead of crashing the validator', () => {
    // libxml2 gives up with an internal error on unexpanded entity references in the tree.
    const content = (just: string, dtd: string): string =>
      `<!DOCTYPE evCancMDFe [${dtd}]><evCancMDFe xmlns="${NS_MDFE}"><descEvento>Cancelamento</descEvento>` +
      `<nProt>010101010101010</nProt><xJust>${just}</xJust></evCancMDFe>`;
    for (const dtd of ['<!ENTITY e "Justificativa interna longa">', `<!ENTITY e SYSTEM "${fixturePath('testcert.pem')}">`]) {
      expect(validateXml(content('&e;', dtd), 'evCancMDFe')).toEqual({
        valid: false,
        errors: ['XML com DOCTYPE não é aceito: documentos fiscais não usam DTD nem entidades'],
      });
    }
    // Control: the same document without the DTD and with the text inline is valid.
    expectValid(content('Justificativa interna longa', '').replace('<!DOCTYPE evCancMDFe []>', ''), 'evCancMDFe');
  });
});

describe('NF-e events: the specific schemas type detEvento fully', () => {
  const retEvento =
    '<retEvento versao="1.00"><infEvento><tpAmb>2</tpAmb><verAplic>SP_EVENTOS_PL_100</verAplic><cOrgao>35</cOrgao>' +
    '<cStat>135</cStat><xMotivo>Evento registrado e vinculado a NF-e</xMotivo>' +
    '<dhRegEvento>2024-02-01T14:07:06-03:00</dhRegEvento></infEvento></retEvento>';
  const cases = [
    [NFE_CANC, 'envEventoCancNFe', 'eventoCancNFe', 'procEventoCancNFe'],
    [NFE_SUBST, 'envEventoCancSubst', 'eventoCancSubst', 'procEventoCancSubst'],
  ] as const;

  it.each(cases)('%s: evento alone and procEventoNFe validate too', (file, _env, single, proc) => {
    const evento = /<evento .*<\/evento>/.exec(fixture(file))![0];
    expectValid(evento, single);
    expectValid(`<procEventoNFe xmlns="${NS_NFE}" versao="1.00">${evento}${retEvento}</procEventoNFe>`, proc);
  });

  it.each(cases)('%s: a short xJust inside detEvento is caught by %s', (file, env, single) => {
    const xml = mutate(fixture(file), /<xJust>[^<]*<\/xJust>/, '<xJust>curta</xJust>');
    expect(expectInvalid(xml, env).join('\n')).toMatch(/xJust.*minLength/);
    expect(expectInvalid(/<evento .*<\/evento>/.exec(xml)![0], single).join('\n')).toMatch(/xJust/);
  });

  it('a cancellation is not a cancellation by substitution', () => {
    expect(expectInvalid(fixture(NFE_CANC), 'envEventoCancSubst').join('\n')).toMatch(/tpEvento|descEvento|chNFeRef/);
  });
});

describe('MDF-e events: detEvento content checked against the schema chosen by tpEvento', () => {
  const prefixCanc = 'detEvento (evCancMDFe_v3.00.xsd): ';

  it('xJust too short in evCancMDFe is invalid although eventoMDFe itself skips detEvento', () => {
    const xml = mutate(fixture(MDFE_CANC), /<xJust>[^<]*<\/xJust>/, '<xJust>curta</xJust>');
    const errors = expectInvalid(xml, 'eventoMDFe');
    // Every error comes from the content schema: the event schema alone found nothing wrong.
    expect(errors.every((e) => e.startsWith(prefixCanc))).toBe(true);
    expect(errors.join('\n')).toMatch(/xJust'.*\[facet 'minLength'\]/);
    expect(() => assertValidXml(xml, 'eventoMDFe')).toThrow(/^XML não confere com o schema eventoMDFe_v3\.00\.xsd: detEvento \(evCancMDFe/);
  });

  it('content errors keep the line numbers of the whole document', () => {
    const xml = mutate(fixture(MDFE_CANC), /<xJust>[^<]*<\/xJust>/, '\n\n<xJust>curta</xJust>');
    expect(expectInvalid(xml, 'eventoMDFe')[0]).toMatch(/^detEvento \(evCancMDFe_v3\.00\.xsd\): linha 3: Element '\{[^}]+\}xJust'/);
  });

  it('an invalid encerramento content (cMun with letters, missing dtEnc) is caught by evEncMDFe', () => {
    const xml = mutate(mutate(fixture(MDFE_ENC), '<cMun>4118402</cMun>', '<cMun>ABC</cMun>'), /<dtEnc>[^<]*<\/dtEnc>/, '');
    const errors = expectInvalid(xml, 'eventoMDFe');
    expect(errors.every((e) => e.startsWith('detEvento (evEncMDFe_v3.00.xsd): '))).toBe(true);
  });

  it('the content must be the element its tpEvento asks for', () => {
    const enc = /<evEncMDFe>.*<\/evEncMDFe>/.exec(fixture(MDFE_ENC))![0];
    const xml = mutate(fixture(MDFE_CANC), /<evCancMDFe>.*<\/evCancMDFe>/, enc);
    const errors = expectInvalid(xml, 'eventoMDFe');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`tpEvento 110111 pede {${NS_MDFE}}evCancMDFe`);
  });

  it('a tpEvento without a known content schema is reported, not passed unchecked', () => {
    const xml = mutate(fixture(MDFE_CANC), '<tpEvento>110111</tpEvento>', '<tpEvento>310620</tpEvento>');
    const errors = expectInvalid(xml, 'eventoMDFe');
    expect(errors).toEqual([expect.stringContaining('tpEvento 310620 sem schema de conteúdo')]);
  });

  it('an event-level error and a content error are both reported', () => {
    let xml = mutate(fixture(MDFE_CANC), /<xJust>[^<]*<\/xJust>/, '<xJust>curta</xJust>');
    xml = mutate(xml, '<nSeqEvento>1</nSeqEvento>', '<nSeqEvento>1234</nSeqEvento>');
    const errors = expectInvalid(xml, 'eventoMDFe');
    expect(errors.some((e) => e.includes('nSeqEvento'))).toBe(true);
    expect(errors.some((e) => e.startsWith(prefixCanc))).toBe(true);
  });

  it('procEventoMDFe checks the inner event content as well', () => {
    const ret =
      '<retEventoMDFe versao="3.00"><infEvento><tpAmb>2</tpAmb><verAplic>SVRS</verAplic><cOrgao>35</cOrgao>' +
      '<cStat>135</cStat><xMotivo>Evento registrado e vinculado ao MDF-e</xMotivo></infEvento></retEventoMDFe>';
    const proc = (ev: string): string => `<procEventoMDFe xmlns="${NS_MDFE}" versao="3.00">${ev}${ret}</procEventoMDFe>`;
    expectValid(proc(fixture(MDFE_CANC)), 'procEventoMDFe');
    expectValid(proc(fixture(MDFE_ENC)), 'procEventoMDFe');
    const bad = proc(mutate(fixture(MDFE_CANC), /<xJust>[^<]*<\/xJust>/, '<xJust>curta</xJust>'));
    expect(expectInvalid(bad, 'procEventoMDFe').every((e) => e.startsWith(prefixCanc))).toBe(true);
  });

  it('the declared encoding of a string is ignored: "ã" counts as one character for maxLength', () => {
    const withJust = (n: number): string =>
      '<?xml version="1.0" encoding="ISO-8859-1"?>' + mutate(fixture(MDFE_CANC), /<xJust>[^<]*<\/xJust>/, `<xJust>${'ã'.repeat(n)}</xJust>`);
    expectValid(withJust(200), 'eventoMDFe'); // 400 characters if the UTF-8 were decoded as Latin-1
    expect(expectInvalid(withJust(256), 'eventoMDFe').join('\n')).toMatch(/maxLength/);
  });
});

describe('schemas', () => {
  const ROOTS: Record<SchemaName, [string, string]> = {
    nfe: [NS_NFE, 'NFe'],
    procNFe: [NS_NFE, 'nfeProc'],
    envEventoCancNFe: [NS_NFE, 'envEvento'],
    eventoCancNFe: [NS_NFE, 'evento'],
    procEventoCancNFe: [NS_NFE, 'procEventoNFe'],
    envEventoCancSubst: [NS_NFE, 'envEvento'],
    eventoCancSubst: [NS_NFE, 'evento'],
    procEventoCancSubst: [NS_NFE, 'procEventoNFe'],
    inutNFe: [NS_NFE, 'inutNFe'],
    procInutNFe: [NS_NFE, 'ProcInutNFe'],
    mdfe: [NS_MDFE, 'MDFe'],
    procMDFe: [NS_MDFE, 'mdfeProc'],
    eventoMDFe: [NS_MDFE, 'eventoMDFe'],
    procEventoMDFe: [NS_MDFE, 'procEventoMDFe'],
    evCancMDFe: [NS_MDFE, 'evCancMDFe'],
    evEncMDFe: [NS_MDFE, 'evEncMDFe'],
    evIncCondutorMDFe: [NS_MDFE, 'evIncCondutorMDFe'],
    evIncDFeMDFe: [NS_MDFE, 'evIncDFeMDFe'],
    rodo: [NS_MDFE, 'rodo'],
    enviNFe: [NS_NFE, 'enviNFe'],
    retEnviNFe: [NS_NFE, 'retEnviNFe'],
    consReciNFe: [NS_NFE, 'consReciNFe'],
    retConsReciNFe: [NS_NFE, 'retConsReciNFe'],
    consSitNFe: [NS_NFE, 'consSitNFe'],
    retConsSitNFe: [NS_NFE, 'retConsSitNFe'],
    consStatServ: [NS_NFE, 'consStatServ'],
    retConsStatServ: [NS_NFE, 'retConsStatServ'],
    envEvento: [NS_NFE, 'envEvento'],
    retEnvEvento: [NS_NFE, 'retEnvEvento'],
    retInutNFe: [NS_NFE, 'retInutNFe'],
    retMDFe: [NS_MDFE, 'retMDFe'],
    retEventoMDFe: [NS_MDFE, 'retEventoMDFe'],
    consSitMDFe: [NS_MDFE, 'consSitMDFe'],
    retConsSitMDFe: [NS_MDFE, 'retConsSitMDFe'],
    consStatServMDFe: [NS_MDFE, 'consStatServMDFe'],
    retConsStatServMDFe: [NS_MDFE, 'retConsStatServMDFe'],
    consMDFeNaoEnc: [NS_MDFE, 'consMDFeNaoEnc'],
    retConsMDFeNaoEnc: [NS_MDFE, 'retConsMDFeNaoEnc'],
    enviMDFe: [NS_MDFE, 'enviMDFe'],
    retEnviMDFe: [NS_MDFE, 'retEnviMDFe'],
    consReciMDFe: [NS_MDFE, 'consReciMDFe'],
    retConsReciMDFe: [NS_MDFE, 'retConsReciMDFe'],
  };

  it('the set covers exactly the documents and web-service messages we handle', () => {
    expect([...schemaNames].sort()).toEqual(Object.keys(ROOTS).sort());
    expect(schemaFile('procInutNFe')).toBe('procInutNFe_v4.00.xsd');
  });

  it.each(Object.entries(ROOTS))('%s compiles and declares its root element', (name, [ns, root]) => {
    // An empty root gets past the root check and is judged by libxml2 itself: it must complain
    // about content, never about an undeclared root (which would mean a wrong file or root name).
    const errors = expectInvalid(`<${root} xmlns="${ns}"/>`, name as SchemaName);
    expect(errors.join('\n')).not.toMatch(/elemento raiz|No matching global declaration/);
    expect(errors[0]).toMatch(/^linha 1: Element '\{[^}]+\}/);
  });

  it('each schema is compiled once and then reused', () => {
    const spy = vi.spyOn(XsdValidator, 'fromDoc');
    validateXml('<inutNFe/>', 'inutNFe');
    const afterFirst = spy.mock.calls.length;
    expect(afterFirst).toBeLessThanOrEqual(1);
    validateXml('<inutNFe/>', 'inutNFe');
    validateXml(fixture(NFCE_BA), 'inutNFe');
    expect(spy.mock.calls.length).toBe(afterFirst);
  });

  it('precompileSchemas compiles up front, so validation compiles nothing', () => {
    precompileSchemas(['procInutNFe', 'evEncMDFe']);
    const spy = vi.spyOn(XsdValidator, 'fromDoc');
    validateXml('<ProcInutNFe/>', 'procInutNFe');
    validateXml(fixture(MDFE_ENC), 'eventoMDFe');
    validateXml('<evEncMDFe/>', 'evEncMDFe');
    expect(spy.mock.calls.length).toBeLessThanOrEqual(1); // eventoMDFe itself may be compiled here
    precompileSchemas();
    spy.mockClear();
    for (const name of schemaNames) validateXml('<x/>', name);
    expect(spy).not.toHaveBeenCalled();
  });

  afterEach(() => vi.restoreAllMocks());
});

describe('SchemaError', () => {
  it('carries every error and a Portuguese message with the file and the first error', () => {
    const xml = mutate(mutate(fixture(NFCE_BA), '<nNF>165439</nNF>', '<nNF>ABC</nNF>'), '<serie>', '<serie>x');
    let caught: unknown;
    try {
      assertValidXml(xml, 'nfe');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SchemaError);
    const err = caught as SchemaError;
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('SchemaError');
    expect(err.schema).toBe('nfe');
    expect(err.errors).toHaveLength(2);
    expect(err.message).toBe(`XML não confere com o schema nfe_v4.00.xsd: ${err.errors[0]}`);
    expect(err.errors.join('\n')).toMatch(/serie[\s\S]*nNF/);
  });

  it('is thrown for not well-formed input too', () => {
    expect(() => assertValidXml('<NFe', 'nfe')).toThrow(/^XML não confere com o schema nfe_v4\.00\.xsd: .*XML malformado/);
  });
});

describe('WebAssembly memory', () => {
  it('every parsed document is disposed, valid or not, well-formed or not', () => {
    const docs: [string, SchemaName][] = [
      [fixture(NFCE_BA), 'nfe'],
      [mutate(fixture(NFCE_BA), '<nNF>165439</nNF>', '<nNF>ABC</nNF>'), 'nfe'],
      [fixture(NFCE_BA).slice(0, 500), 'nfe'],
      [fixture(MDFE_CANC), 'nfe'], // wrong root
      [fixture(MDFE_CANC), 'eventoMDFe'],
      [mutate(fixture(MDFE_CANC), /<xJust>[^<]*<\/xJust>/, '<xJust>x</xJust>'), 'eventoMDFe'],
      [mutate(fixture(MDFE_CANC), '<tpEvento>110111</tpEvento>', '<tpEvento>1</tpEvento>'), 'eventoMDFe'],
      ['', 'mdfe'],
    ];
    for (const [xml, schema] of docs) validateXml(xml, schema); // compile outside the tracked window
    diag.configure({ enabled: true });
    try {
      for (let i = 0; i < 50; i++) for (const [xml, schema] of docs) validateXml(xml, schema);
      // The report lists XmlDisposable objects created while enabled and not disposed yet.
      expect(diag.report()).toEqual({});
      // Control: the tracker does see an undisposed document.
      const leaked = XmlDocument.fromString('<a/>');
      expect(Object.keys(diag.report())).toEqual(['XmlDocument']);
      leaked.dispose();
    } finally {
      diag.configure({ enabled: false });
    }
  });

  it('validating 2,000 NFC-e documents does not grow the WebAssembly heap', () => {
    // WebAssembly.Memory is reported as `external`; it only grows, so leaked documents show up
    // here (about 28 KB each for this fixture, ~56 MB for 2,000) while rss is too noisy to tell.
    const xml = fixture(NFCE_BA);
    const bad = mutate(xml, '<nNF>165439</nNF>', '<nNF>ABC</nNF>');
    for (let i = 0; i < 50; i++) validateXml(i % 2 ? xml : bad, 'nfe');
    const before = process.memoryUsage().external;
    for (let i = 0; i < 2000; i++) expect(validateXml(i % 2 ? xml : bad, 'nfe').valid).toBe(i % 2 === 1);
    const growth = process.memoryUsage().external - before;
    expect(growth).toBeLessThan(8 * 1024 * 1024);
  });
});
