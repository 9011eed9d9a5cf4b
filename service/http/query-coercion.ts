// Validation never coerces request bodies (a fiscal API must refuse `"nNF": "12"` instead of
// silently signing 12), so Ajv runs with coerceTypes off. Query strings and path parameters,
// though, are text by nature: this preValidation hook converts their top-level values to the
// integer/number/boolean their schema declares (and a lone value to a one-item array), before
// validation. Anything that does not convert cleanly is left as text for validation to refuse.

import type { FastifyRequest } from 'fastify';

type PropertySchema = { type?: string | string[]; items?: PropertySchema };
type ObjectSchema = { properties?: Record<string, PropertySchema> };

const INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

function convert(value: string, schema: PropertySchema): unknown {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string')) return value;
  if (types.includes('integer') && INTEGER.test(value) && Number.isSafeInteger(Number(value))) return Number(value);
  if (types.includes('number') && NUMBER.test(value)) return Number(value);
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function coerce(target: unknown, schema: ObjectSchema | undefined): void {
  if (!schema?.properties || target === null || typeof target !== 'object') return;
  const values = target as Record<string, unknown>;
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = values[name];
    if (value === undefined) continue;
    const isArray = property.type === 'array' || (Array.isArray(property.type) && property.type.includes('array'));
    if (isArray) {
      const list = Array.isArray(value) ? value : [value];
      values[name] = property.items ? list.map((v) => (typeof v === 'string' ? convert(v, property.items!) : v)) : list;
    } else if (typeof value === 'string') {
      values[name] = convert(value, property);
    }
  }
}

export async function coerceQueryAndParams(request: FastifyRequest): Promise<void> {
  const schema = request.routeOptions.schema as { querystring?: ObjectSchema; params?: ObjectSchema } | undefined;
  if (!schema) return;
  coerce(request.query, schema.querystring);
  coerce(request.params, schema.params);
}
