// The BR Code (docs/pix.md, "BR Code"): the text a PIX QR Code carries, as the central bank
// profiles EMV® QRCPS Merchant-Presented Mode ("Manual de Padrões para Iniciação do Pix").
// Pure, so the terminal and the screen build the same string.
//
// Records are TLV: ID (2 digits), LENGTH (2 digits), VALUE. The string ends with the CRC record,
// `63` `04` and CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, no reflection, no final
// xor) of everything before it, `6304` included, in 4 upper-case hex digits.

/** The GUI of PIX's merchant account information (record 26, sub-record 00). */
export const PIX_GUI = 'br.gov.bcb.pix';

/** A BR Code that cannot be written, naming the field. */
export class BrCodeError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'BrCodeError';
  }
}

/** CRC-16/CCITT-FALSE of the text's bytes (ASCII: the BR Code is written in it), 4 hex digits. */
export function crc16CcittFalse(text: string): string {
  let crc = 0xffff;
  for (let i = 0; i < text.length; i++) {
    crc ^= text.charCodeAt(i) << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

function tlv(id: string, value: string, field: string): string {
  if (value.length > 99) throw new BrCodeError(field, `${field}: no máximo 99 caracteres no BR Code`);
  return `${id}${String(value.length).padStart(2, '0')}${value}`;
}

// Names and cities go out in plain ASCII (payers' apps show them; accents break some readers).
const ascii = (s: string): string =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^ -~]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

function merchant(name: string, city: string): string {
  const n = ascii(name).slice(0, 25).trim();
  const c = ascii(city).slice(0, 15).trim();
  if (!n) throw new BrCodeError('merchantName', 'Nome do recebedor: obrigatório no BR Code');
  if (!c) throw new BrCodeError('merchantCity', 'Cidade do recebedor: obrigatória no BR Code');
  return tlv('59', n, 'merchantName') + tlv('60', c, 'merchantCity');
}

/** The amount record (54): reais with a dot and two decimals, from integer cents. */
function amount(cents: number | undefined): string {
  if (cents === undefined) return '';
  if (!Number.isSafeInteger(cents) || cents <= 0) throw new BrCodeError('amountCents', 'Valor do PIX: um número inteiro de centavos maior que zero');
  const text = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
  if (text.length > 13) throw new BrCodeError('amountCents', 'Valor do PIX: no máximo 13 caracteres no BR Code');
  return tlv('54', text, 'amountCents');
}

const withCrc = (body: string): string => {
  const head = `${body}6304`;
  return head + crc16CcittFalse(head);
};

/**
 * The kinds of PIX key (DICT): CPF or CNPJ (digits; the CNPJ alphanumeric since 2026), e-mail,
 * phone (+55 and digits) and the random key (EVP, a UUID). Null when the key is well formed.
 */
export function pixKeyProblem(key: string): string | null {
  if (/^[0-9]{11}$/.test(key)) return null; // CPF
  if (/^[0-9A-Z]{12}[0-9]{2}$/.test(key)) return null; // CNPJ
  if (/^\+[1-9][0-9]{10,13}$/.test(key)) return null; // phone
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(key)) return null; // EVP
  if (key.length <= 77 && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(key)) return null; // e-mail
  return 'Chave PIX inválida: use CPF ou CNPJ (só os caracteres), e-mail, telefone (+55DDDNÚMERO) ou chave aleatória';
}

export type StaticBrCodeInput = {
  /** The receiver's PIX key. */
  key: string;
  merchantName: string;
  merchantCity: string;
  /** Absent: the payer types the amount. */
  amountCents?: number;
  /** The reference the receiver sees in the statement: up to 25 letters and digits; absent: `***`. */
  txid?: string;
  /** A message the payer's app shows (record 26-02). */
  description?: string;
};

/** A static BR Code (tPag 20): made at the counter, with no PSP; reusable, no confirmation. */
export function staticBrCode(input: StaticBrCodeInput): string {
  const problem = pixKeyProblem(input.key);
  if (problem) throw new BrCodeError('key', problem);
  const txid = input.txid ?? '***';
  if (txid !== '***' && !/^[A-Za-z0-9]{1,25}$/.test(txid)) throw new BrCodeError('txid', 'Referência do PIX: de 1 a 25 letras e dígitos');
  const description = input.description === undefined ? '' : ascii(input.description);
  const account = tlv('00', PIX_GUI, 'gui') + tlv('01', input.key, 'key') + (description ? tlv('02', description, 'description') : '');
  return withCrc(
    tlv('00', '01', 'payloadFormat') +
      tlv('26', account, 'merchantAccount') +
      '52040000' +
      '5303986' +
      amount(input.amountCents) +
      '5802BR' +
      merchant(input.merchantName, input.merchantCity) +
      tlv('62', tlv('05', txid, 'txid'), 'additionalData'),
  );
}

export type DynamicBrCodeInput = {
  /** The charge's location at the PSP (`loc.location` of the API Pix), without the scheme. */
  location: string;
  merchantName: string;
  merchantCity: string;
};

/**
 * A dynamic BR Code (tPag 17): single use (point of initiation 12), pointing at the PSP's location
 * where the payer's app reads the charge (its amount and txid); the txid record is `***`.
 */
export function dynamicBrCode(input: DynamicBrCodeInput): string {
  const location = input.location.replace(/^https:\/\//, '');
  if (!location) throw new BrCodeError('location', 'Endereço da cobrança (location): obrigatório no BR Code dinâmico');
  return withCrc(
    tlv('00', '01', 'payloadFormat') +
      tlv('01', '12', 'pointOfInitiation') +
      tlv('26', tlv('00', PIX_GUI, 'gui') + tlv('25', location, 'location'), 'merchantAccount') +
      '52040000' +
      '5303986' +
      '5802BR' +
      merchant(input.merchantName, input.merchantCity) +
      tlv('62', tlv('05', '***', 'txid'), 'additionalData'),
  );
}
