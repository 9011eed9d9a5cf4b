// The query and the answer of the export endpoints (GET /api/v1/nfce/exportacao and
// /api/v1/mdfe/exportacao).

import { Type } from '@sinclair/typebox';

export const ExportQuery = Type.Object(
  {
    de: Type.String({ format: 'date', description: 'Primeiro dia, AAAA-MM-DD, horário de Brasília (inclusive)' }),
    ate: Type.String({ format: 'date', description: 'Último dia, AAAA-MM-DD, horário de Brasília (inclusive); até 366 dias depois de de' }),
  },
  { additionalProperties: false },
);

export const ZipResponse = {
  description: 'Arquivo ZIP, transmitido à medida que é escrito (Transfer-Encoding: chunked)',
  content: { 'application/zip': { schema: Type.Unsafe<Buffer | NodeJS.ReadableStream>({ type: 'string', format: 'binary' }) } },
};
