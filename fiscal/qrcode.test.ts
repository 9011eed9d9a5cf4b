import { createHash, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildAccessKey } from './access-key.ts';
import { NFCE_QR_URLS, NFCE_URL_CHAVE } from './br/nfce-urls.ts';
import { UFS } from './br/uf.ts';
import { generateTestCertificate } from './certificate.ts';
import { FieldError } from './errors.ts';
import { digValHex, MDFE_QR_BASE_URL, mdfeQrCode, nfceQrCodeOffline, nfceQrCodeOnline, qrBaseUrlOf, urlChaveOf, urlChaveOfKey } from './qrcode.ts';
import { fixturePath } from './testdata/fixtures.ts';
import { firstText } from './xml.ts';
import { ACCESS_KEY_PATTERN } from '../base/common/access-key.ts';

// Fixture vectors (docs/fiscal.md, "QR Code"; fiscal/testdata/xml/README.md).
const CSC = { id: '000001', token: 'CSC-DE-TESTE-123456' };
const KEY_ONLINE = '29181033657677000156650010001654391001654392';
const KEY_OFFLINE = '29181033657677000156650010001654399001654399'; // wrong DV on purpose (fixture)
const DIGEST = 'm9ZrQTKMxv7A1Blnf/nmNGVX+N8=';
const BA_HOM = 'http://hnfe.sefaz.ba.gov.br/servicos/nfce/qrcode.aspx';

const fixtureQr = (name: string): string => firstText(readFileSync(fixturePath(name), 'utf8'), 'qrCode')!;

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof FieldError) return err.field;
    throw err;
  }
  return undefined;
}

let keys: { privateKeyPem: string; certificatePem: string };
beforeAll(() => {
  keys = generateTestCertificate({ cnpj: '11222333000181', xNome: 'EMPRESA TESTE' }).certificate;
});

describe('NFC-e QR Code v2', () => {
  it('online: reproduces the fixture text and hash (cIdToken without leading zeros, UPPERCASE SHA-1)', () => {
    const qr = nfceQrCodeOnline({ key: KEY_ONLINE, tpAmb: 2, version: 2, csc: CSC });
    expect(qr).toBe(`${BA_HOM}?p=${KEY_ONLINE}|2|2|1|54D2AA6023D50883275C00B635B9C930A05921C1`);
    expect(qr).toBe(fixtureQr('nfce_tpEmis1_qrV2_online_signed_testcert.xml'));
    const expected = createHash('sha1').update(`${KEY_ONLINE}|2|2|1CSC-DE-TESTE-123456`).digest('hex').toUpperCase();
    expect(qr.endsWith(`|${expected}`)).toBe(true);
  });

  it('offline: reproduces the fixture (dia, vNF with 2 decimals, digVal = hex of the DigestValue text, hash)', () => {
    const qr = nfceQrCodeOffline({
      key: KEY_OFFLINE,
      tpAmb: 2,
      version: 2,
      dhEmi: '2018-10-01T07:28:14-04:00',
      vNF: '150',
      digestValue: DIGEST,
      csc: CSC,
    });
    expect(qr).toBe(fixtureQr('nfce_tpEmis9_qrV2_offline_signed_testcert.xml'));
    expect(qr).toBe(
      `${BA_HOM}?p=${KEY_OFFLINE}|2|2|01|150.00|6d395a7251544b4d7876374131426c6e662f6e6d4e4756582b4e383d|1|643B57DB5B63455557173B6A17D19ADCFE854353`,
    );
  });

  it('digVal is the lowercase hex of the 28 ASCII characters (56 hex digits)', () => {
    expect(digValHex(DIGEST)).toBe('6d395a7251544b4d7876374131426c6e662f6e6d4e4756582b4e383d');
    expect(fieldOf(() => digValHex('not base64'))).toBe('digestValue');
  });

  it('strips only non-significant zeros of the CSC id', () => {
    const idOf = (id: string) => nfceQrCodeOnline({ key: KEY_ONLINE, tpAmb: 1, version: 2, csc: { id, token: 'X' } }).split('|')[3];
    expect(idOf('000001')).toBe('1');
    expect(idOf('000120')).toBe('120');
    expect(idOf('000000')).toBe('0');
    expect(idOf('123456')).toBe('123456');
    expect(fieldOf(() => idOf('1234567'))).toBe('csc.id');
  });

  it('demands the CSC, naming the field csc', () => {
    expect(fieldOf(() => nfceQrCodeOnline({ key: KEY_ONLINE, tpAmb: 2, version: 2 }))).toBe('csc');
    expect(
      fieldOf(() => nfceQrCodeOffline({ key: KEY_OFFLINE, tpAmb: 2, version: 2, dhEmi: '2018-10-01T07:28:14-04:00', vNF: '1.00', digestValue: DIGEST })),
    ).toBe('csc');
    expect(fieldOf(() => nfceQrCodeOnline({ key: KEY_ONLINE, tpAmb: 2, version: 2, csc: { id: '1', token: ' ' } }))).toBe('csc');
  });

  it('production and homologation use their own addresses', () => {
    expect(nfceQrCodeOnline({ key: KEY_ONLINE, tpAmb: 1, version: 2, csc: CSC })).toMatch(
      new RegExp(`^http://nfe\\.sefaz\\.ba\\.gov\\.br/servicos/nfce/qrcode\\.aspx\\?p=${ACCESS_KEY_PATTERN}\\|2\\|1\\|1\\|[0-9A-F]{40}$`),
    );
  });
});

describe('NFC-e QR Code v3', () => {
  it('online: chave|3|tpAmb, as in the fixture', () => {
    const qr = nfceQrCodeOnline({ key: KEY_ONLINE, tpAmb: 2, version: 3 });
    expect(qr).toBe(`${BA_HOM}?p=${KEY_ONLINE}|3|2`);
    expect(qr).toBe(fixtureQr('nfce_tpEmis1_qrV3_online_signed_testcert.xml'));
  });

  it('offline: fields 1–7 match the fixture and the signature verifies with the certificate', () => {
    const qr = nfceQrCodeOffline({
      key: KEY_OFFLINE,
      tpAmb: 2,
      version: 3,
      dhEmi: '2018-10-01T07:28:14-04:00',
      vNF: '150.00',
      privateKeyPem: keys.privateKeyPem,
    });
    const fixture = fixtureQr('nfce_tpEmis9_qrV3_offline_signed_testcert.xml');
    const fields = `${KEY_OFFLINE}|3|2|01|150.00||`;
    expect(qr.startsWith(`${BA_HOM}?p=${fields}|`)).toBe(true);
    expect(fixture.startsWith(`${BA_HOM}?p=${fields}|`)).toBe(true);
    const signature = Buffer.from(qr.slice(qr.lastIndexOf('|') + 1), 'base64');
    expect(signature.length).toBe(256);
    expect(verify('RSA-SHA1', Buffer.from(fields), keys.certificatePem, signature)).toBe(true);
    expect(verify('RSA-SHA1', Buffer.from(fields.replace('150.00', '150.01')), keys.certificatePem, signature)).toBe(false);
  });

  it("the fixture's own v3 signature verifies with testcert.pem", () => {
    const fixture = fixtureQr('nfce_tpEmis9_qrV3_offline_signed_testcert.xml');
    const p = fixture.slice(fixture.indexOf('?p=') + 3);
    const cut = p.lastIndexOf('|');
    const cert = readFileSync(fixturePath('testcert.pem'), 'utf8');
    expect(verify('RSA-SHA1', Buffer.from(p.slice(0, cut)), cert, Buffer.from(p.slice(cut + 1), 'base64'))).toBe(true);
  });

  it('tp_idDest/cDest: CNPJ 1, CPF 2, foreigner 3 without document, unidentified empty', () => {
    const fields = (dest?: { cpf?: string; cnpj?: string; idEstrangeiro?: string }) => {
      const qr = nfceQrCodeOffline({
        key: KEY_OFFLINE,
        tpAmb: 1,
        version: 3,
        dhEmi: '2026-11-05T10:00:00-03:00',
        vNF: '0.5',
        dest,
        privateKeyPem: keys.privateKeyPem,
      });
      return qr.split('?p=')[1]!.split('|').slice(3, 7).join('|');
    };
    expect(fields()).toBe('05|0.50||');
    expect(fields({ cnpj: '11222333000181' })).toBe('05|0.50|1|11222333000181');
    expect(fields({ cpf: '52998224725' })).toBe('05|0.50|2|52998224725');
    expect(fields({ idEstrangeiro: 'AB123456' })).toBe('05|0.50|3|');
    expect(fieldOf(() => fields({ cpf: '52998224725', cnpj: '11222333000181' }))).toBe('dest');
  });

  it('requires the private key for the offline v3 signature', () => {
    expect(fieldOf(() => nfceQrCodeOffline({ key: KEY_OFFLINE, tpAmb: 2, version: 3, dhEmi: '2026-11-05T10:00:00-03:00', vNF: '1.00' }))).toBe('privateKeyPem');
  });

  it('takes the day of a Date in Brasília time', () => {
    const qr = nfceQrCodeOffline({
      key: KEY_OFFLINE,
      tpAmb: 2,
      version: 3,
      dhEmi: new Date('2026-11-22T02:30:00Z'), // 21st, 23:30 in Brasília
      vNF: '10.00',
      privateKeyPem: keys.privateKeyPem,
    });
    expect(qr.split('|')[3]).toBe('21');
  });
});

describe('QR key checks', () => {
  it('ties the key tpEmis to the mode, as the schema patterns do', () => {
    expect(fieldOf(() => nfceQrCodeOnline({ key: KEY_OFFLINE, tpAmb: 2, version: 3 }))).toBe('chave');
    expect(
      fieldOf(() => nfceQrCodeOffline({ key: KEY_ONLINE, tpAmb: 2, version: 2, dhEmi: '2026-11-05T10:00:00-03:00', vNF: '1', digestValue: DIGEST, csc: CSC })),
    ).toBe('chave');
    expect(fieldOf(() => nfceQrCodeOnline({ key: '123', tpAmb: 2, version: 3 }))).toBe('chave');
    // model 55 key
    expect(fieldOf(() => nfceQrCodeOnline({ key: '35180834128745000152550010000474281920007498', tpAmb: 2, version: 3 }))).toBe('chave');
    expect(fieldOf(() => nfceQrCodeOnline({ key: KEY_ONLINE, tpAmb: 3 as 1, version: 3 }))).toBe('tpAmb');
  });
});

describe('per-UF URL tables', () => {
  it('cover the 27 UFs in both environments, within the schema limits', () => {
    for (const uf of UFS) {
      for (const tpAmb of [1, 2] as const) {
        expect(qrBaseUrlOf(uf, tpAmb)).toMatch(/^https?:\/\/\S+$/);
        const urlChave = urlChaveOf(uf, tpAmb);
        expect(urlChave.length).toBeGreaterThanOrEqual(21);
        expect(urlChave.length).toBeLessThanOrEqual(85);
      }
    }
    expect(Object.keys(NFCE_QR_URLS).sort()).toEqual([...UFS]);
    expect(Object.keys(NFCE_URL_CHAVE).sort()).toEqual([...UFS]);
  });

  it('spot checks against docs/fiscal.md, "QR Code"', () => {
    expect(qrBaseUrlOf('SP', 1)).toBe('https://www.nfce.fazenda.sp.gov.br/qrcode');
    expect(qrBaseUrlOf('SP', 2)).toBe('https://www.homologacao.nfce.fazenda.sp.gov.br/qrcode');
    expect(qrBaseUrlOf('RS', 2)).toBe('https://www.sefaz.rs.gov.br/NFCE/NFCE-COM.aspx');
    expect(urlChaveOf('BA', 2)).toBe('http://hinternet.sefaz.ba.gov.br/nfce/consulta');
    expect(urlChaveOf('MG', 1)).toBe('https://portalsped.fazenda.mg.gov.br/portalnfce');
    expect(urlChaveOf('PR', 2)).toBe('http://www.fazenda.pr.gov.br/nfce/consulta');
    expect(urlChaveOfKey(KEY_ONLINE, 2)).toBe('http://hinternet.sefaz.ba.gov.br/nfce/consulta');
  });

  it('rejects an unknown UF', () => {
    expect(fieldOf(() => qrBaseUrlOf('XX', 1))).toBe('UF');
    expect(fieldOf(() => urlChaveOf('sp', 1, 'emit.enderEmit.UF'))).toBe('emit.enderEmit.UF');
  });
});

describe('MDF-e QR Code', () => {
  const mdfeKey = (tpEmis: number) =>
    buildAccessKey({ cUF: '41', yearMonth: '2611', cnpj: '11222333000181', model: '58', serie: 1, number: 7, tpEmis, code: '10203040' });
  // The qrCodMDFe pattern of mdfeTiposBasico_v3.00.xsd (unescaped `&`).
  const PATTERN = /^((HTTPS?|https?):\/\/.*\?chMDFe=[0-9]{6}[A-Z0-9]{12}[0-9]{26}&tpAmb=[1-2](&sign=[!-ÿ]{1}[ -ÿ]{0,}[!-ÿ]{1}|[!-ÿ]{1})?)$/;

  it('normal emission: chMDFe and tpAmb only', () => {
    const key = mdfeKey(1);
    const qr = mdfeQrCode({ key, tpAmb: 2, tpEmis: 1 });
    expect(qr).toBe(`${MDFE_QR_BASE_URL}?chMDFe=${key}&tpAmb=2`);
    expect(qr).toMatch(PATTERN);
    expect(qr.length).toBeGreaterThanOrEqual(50);
  });

  it('contingency (tpEmis 2): appends sign = RSA-SHA1 of the key, verifiable with the certificate', () => {
    const key = mdfeKey(2);
    const qr = mdfeQrCode({ key, tpAmb: 1, tpEmis: 2, privateKeyPem: keys.privateKeyPem });
    expect(qr).toMatch(PATTERN);
    const sign = qr.slice(qr.indexOf('&sign=') + 6);
    expect(verify('RSA-SHA1', Buffer.from(key), keys.certificatePem, Buffer.from(sign, 'base64'))).toBe(true);
    expect(fieldOf(() => mdfeQrCode({ key, tpAmb: 1, tpEmis: 2 }))).toBe('privateKeyPem');
  });

  it('checks the key and its tpEmis', () => {
    expect(fieldOf(() => mdfeQrCode({ key: mdfeKey(1), tpAmb: 1, tpEmis: 2, privateKeyPem: keys.privateKeyPem }))).toBe('tpEmis');
    expect(fieldOf(() => mdfeQrCode({ key: KEY_ONLINE, tpAmb: 1, tpEmis: 1 }))).toBe('chMDFe');
  });
});
