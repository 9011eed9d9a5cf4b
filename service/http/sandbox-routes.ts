// Sandbox controls (docs/api.md, "Sandbox controls"), per company: the simulated tax authority's latency
// and availability, and the company's clock. Registered only in sandbox mode, so in production
// these paths are unknown routes (404) and absent from the OpenAPI document.

import { Type } from '@sinclair/typebox';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { companyOf } from './auth.ts';
import { errorResponses } from './errors.ts';
import type { ApiRoutes } from './type-provider.ts';

const MAX_LATENCY_MS = 60_000;
// Ten years: far beyond any fiscal window worth testing, and far from overflowing a Date.
const MAX_ADVANCE_MINUTES = 10 * 366 * 24 * 60;

const AuthorityBody = Type.Object(
  {
    latencia_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LATENCY_MS, description: 'Tempo de resposta da autoridade simulada, em ms' })),
    disponivel: Type.Optional(Type.Boolean({ description: 'false: a autoridade não responde (NFC-e fica em processamento; MDF-e recebe 503)' })),
  },
  { additionalProperties: false, examples: [{ latencia_ms: 0, disponivel: true }] },
);

const AuthorityView = Type.Object({ latencia_ms: Type.Integer(), disponivel: Type.Boolean() });

const ClockBody = Type.Object(
  {
    avancar_minutos: Type.Integer({ minimum: 0, maximum: MAX_ADVANCE_MINUTES, description: 'Minutos a adiantar no relógio desta empresa' }),
  },
  { additionalProperties: false, examples: [{ avancar_minutos: 31 }] },
);

const ClockView = Type.Object({
  deslocamento_minutos: Type.Integer({ description: 'Quanto o relógio da empresa está adiantado em relação ao real, no total' }),
  agora: Type.String({ description: 'Data e hora atuais da empresa, horário de Brasília' }),
});

export const sandboxRoutes: ApiRoutes = async (app, { deps }) => {
  app.post(
    '/sandbox/autoridade',
    {
      schema: {
        tags: ['sandbox'],
        summary: 'Configura a autoridade fiscal simulada desta empresa',
        body: AuthorityBody,
        response: { 200: AuthorityView, ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (request) => {
      const company = companyOf(request);
      const { latencia_ms, disponivel } = request.body;
      const settings = await deps.store.updateSandboxAuthority(company.id, { latencyMs: latencia_ms, disponivel });
      return { latencia_ms: settings.latencyMs, disponivel: settings.disponivel };
    },
  );

  app.post(
    '/sandbox/relogio',
    {
      schema: {
        tags: ['sandbox'],
        summary: 'Adianta o relógio desta empresa (janelas de cancelamento e encerramento)',
        body: ClockBody,
        response: { 200: ClockView, ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (request) => {
      const company = companyOf(request);
      const { offsetMinutes, now } = await deps.clock.advance(company.id, request.body.avancar_minutos);
      return { deslocamento_minutos: offsetMinutes, agora: formatBrasilia(now) };
    },
  );
};
