// Answers that are not JSON, as the OpenAPI document declares them: the content type the route
// sends, so that a client (or a generated one) reads an XML or a PDF as what it is.

import { Type } from '@sinclair/typebox';

const binary = (description?: string) => Type.Unsafe<Buffer>({ type: 'string', format: 'binary', ...(description && { description }) });

/** A 200 with an XML document (`application/xml`). */
export const xmlAnswer = (description: string) => ({ description, content: { 'application/xml': { schema: Type.String() } } });

/** A 200 with a PDF (`application/pdf`), or also other binary forms of the same document. */
export const pdfAnswer = (description: string, more: Record<string, string> = {}) => ({
  description,
  content: {
    'application/pdf': { schema: binary() },
    ...Object.fromEntries(Object.entries(more).map(([type, what]) => [type, { schema: binary(what) }])),
  },
});
