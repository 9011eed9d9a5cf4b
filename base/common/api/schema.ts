// What the API's TypeBox schemas share: strict objects (an unknown field is refused, never
// dropped), nullable fields as plain JSON Schema, and the idempotency key of a request body.

import { Type, type Static, type TSchema } from '@sinclair/typebox';

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
