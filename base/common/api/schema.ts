// What the API's TypeBox schemas share: strict objects (an unknown field is refused, never
// dropped), nullable fields as plain JSON Schema, the idempotency key of a request body, and the
// forms of a CNPJ, a CPF and an access key (the definitions of base/common, so the OpenAPI
// document publishes the same patterns the fiscal core checks).

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ACCESS_KEY_PATTERN } from '../access-key.ts';
import { CNPJ_PATTERN, CPF_PATTERN } from '../tax-ids.ts';

export const strict = { additionalProperties: false } as const;

/** `type: [T, 'null']`: plain JSON Schema (OpenAPI 3.1), fast to serialize. */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string } & Record<string, unknown>;
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/** The longest idempotency key, in Unicode characters. */
export const MAX_KEY_LENGTH = 200;

/** The key in the body of every issuance request (`referencia_externa`). */
export const ReferenciaExterna = Type.String({
  minLength: 1,
  maxLength: MAX_KEY_LENGTH,
  description: 'Chave de idempotência no corpo, alternativa ao cabeçalho Idempotency-Key (mesmo efeito)',
});

/** What a schema error says of the fields below instead of quoting their pattern (service/http/errors.ts). */
/**
 * The characters of a justification (xJust): Latin-1 printable and blanks, not all blanks. The
 * service folds each run of blanks into one space and trims the edges (fiscal/events.ts
 * justification), so a text matching this is, once folded, the layout's TString; an emoji or a
 * typographic quote is refused naming the field.
 */
export const JUSTIFICATION_PATTERN = '^(?=[\\s\\S]*\\S)[\\s!-\\u00ff]*$';

export const PATTERN_NAMES: Record<string, string> = {
  [JUSTIFICATION_PATTERN]: 'letras, números, espaços e pontuação comuns; sem emoji nem aspas tipográficas',
  [`^${CNPJ_PATTERN}$`]: 'CNPJ de 14 caracteres: dígitos ou letras maiúsculas, os dois últimos numéricos, sem pontuação',
  [`^${CPF_PATTERN}$`]: 'CPF de 11 dígitos, sem pontuação',
  [`^${ACCESS_KEY_PATTERN}$`]: 'chave de acesso de 44 posições: dígitos, e letras maiúsculas só no CNPJ',
};

/** A CNPJ, numeric or alphanumeric, unmasked (its check digits are the fiscal builder's: 422). */
export const Cnpj = (description: string) =>
  Type.String({ pattern: `^${CNPJ_PATTERN}$`, description: `${description}: 14 caracteres, dígitos ou letras maiúsculas (CNPJ alfanumérico)` });

/** A CPF, 11 digits. */
export const Cpf = (description: string) => Type.String({ pattern: `^${CPF_PATTERN}$`, description: `${description} (11 dígitos)` });

/** An access key, 44 positions (letters only where the CNPJ is alphanumeric). */
export const AccessKey = (description: string) => Type.String({ pattern: `^${ACCESS_KEY_PATTERN}$`, description: `${description} (44 posições)` });

/** A justification: 15 to 255 characters of JUSTIFICATION_PATTERN (the service then folds runs of blanks and counts again). */
export const Justificativa = (description: string) =>
  Type.String({
    minLength: 15,
    maxLength: 255,
    pattern: JUSTIFICATION_PATTERN,
    description: `${description} (15 a 255 caracteres; letras, números e pontuação comuns)`,
  });
