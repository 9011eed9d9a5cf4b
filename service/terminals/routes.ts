// The checkouts of the caller's company and the NFC-e series each one issues in (docs/api.md,
// "Terminals and series"). The caller numbers its NFC-e itself, so two checkouts sharing a series
// would hand out the same numbers: each terminal claims its series here, and a series held by
// another terminal of the same company is refused (409 serie_em_uso, naming the holder).
//
// PUT is the whole state of one terminal (its name and every series it issues in), so it is
// idempotent: sending it again changes nothing, and a terminal that moves to another series
// releases the old one in the same call.
//
// The answer says where each of its series stands (`numeracao`: the highest number the service
// holds in it): a terminal claims at every start, so one whose database was restored from a copy,
// or moved to a new computer, learns the numbers issued since and never issues below them.

import { Type } from '@sinclair/typebox';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { strict } from '../../base/common/api/schema.ts';
import { companyOf } from '../http/auth.ts';
import { ApiError, errorResponses, notFound } from '../http/errors.ts';
import type { ApiRoutes } from '../http/type-provider.ts';
import type { TerminalRecord } from './store.ts';

const TerminalParams = Type.Object(
  {
    terminal: Type.String({
      minLength: 1,
      maxLength: 64,
      // Not `.` or `..` alone: a URL's dot segments, which clients resolve away before sending.
      pattern: '^(?!\\.{1,2}$)[A-Za-z0-9._-]+$',
      description: 'Identificador do terminal (o terminal gera um UUID)',
    }),
  },
  strict,
);

const TerminalBody = Type.Object(
  {
    nome: Type.String({ minLength: 1, maxLength: 60, description: 'Nome do caixa, mostrado a quem encontrar a série em uso (ex.: Caixa 2)' }),
    series: Type.Array(Type.Integer({ minimum: 0, maximum: 999 }), {
      minItems: 1,
      maxItems: 10,
      uniqueItems: true,
      description: 'Todas as séries de NFC-e em que este terminal emite (a normal e, se houver, a da contingência)',
    }),
  },
  { ...strict, examples: [{ nome: 'Caixa 2', series: [2, 902] }] },
);

const TerminalView = Type.Object({
  terminal: Type.String(),
  nome: Type.String(),
  series: Type.Array(Type.Integer()),
  criado_em: Type.String({ description: 'Registrado em, horário de Brasília com o deslocamento' }),
  atualizado_em: Type.String({ description: 'Última mudança de nome ou séries, horário de Brasília com o deslocamento' }),
});

const Numbering = Type.Array(
  Type.Object({
    serie: Type.Integer(),
    ultimo_numero: Type.Integer({
      description: 'O maior número de NFC-e desta série que o serviço tem (autorizada, em processamento, cancelada ou inutilizada); 0 se nenhum',
    }),
  }),
  { description: 'Onde cada série do terminal está: o próximo número a emitir é maior que ultimo_numero' },
);

const TerminalWithNumbering = Type.Object({ ...TerminalView.properties, numeracao: Numbering });

// The deployment's technical responsible (service/resp-tec.ts), CSRT included: a checkout signs its
// offline-contingency receipts itself and writes infRespTec in them as the service does. The CSRT
// goes only to the company's own token, like nothing else of the deployment's.
const TechnicalResponsibleView = Type.Object(
  {
    cnpj: Type.String(),
    contato: Type.String(),
    email: Type.String(),
    telefone: Type.String(),
    csrt: Type.Union([Type.Object({ id: Type.Integer(), token: Type.String() }), Type.Null()]),
  },
  { description: 'O responsável técnico (infRespTec) que o terminal escreve nas NFC-e que assina em contingência; null se o serviço não tem um' },
);

const TerminalClaimed = Type.Object({ ...TerminalWithNumbering.properties, responsavel_tecnico: Type.Union([TechnicalResponsibleView, Type.Null()]) });

// Instants in Brasília time with the offset, as every answer of the API gives them (docs/api.md, "Responses").
const view = (t: TerminalRecord) => ({
  terminal: t.terminalId,
  nome: t.nome,
  series: t.series,
  criado_em: formatBrasilia(new Date(t.createdAt)),
  atualizado_em: formatBrasilia(new Date(t.updatedAt)),
});

export const terminalRoutes: ApiRoutes = async (app, { deps }) => {
  const withNumbering = async (companyId: string, t: TerminalRecord) => {
    const highest = await deps.store.nfce.highestNumbers(companyId, t.series);
    return { ...view(t), numeracao: t.series.map((serie) => ({ serie, ultimo_numero: highest.get(serie) ?? 0 })) };
  };

  app.put(
    '/terminais/:terminal',
    {
      schema: {
        tags: ['terminais'],
        summary: 'Registra o terminal e as séries de NFC-e em que ele emite (idempotente)',
        description:
          'As séries informadas passam a ser deste terminal e as que ele tinha e não estão na lista são liberadas. ' +
          'Uma série de outro terminal da mesma empresa é recusada como um todo: 409 serie_em_uso, com o terminal que a usa. ' +
          'A resposta diz, em numeracao, o maior número que o serviço tem em cada série: o terminal continua acima dele; ' +
          'e, em responsavel_tecnico, o responsável técnico que o terminal escreve nas NFC-e que assina em contingência.',
        params: TerminalParams,
        body: TerminalBody,
        response: { 200: TerminalClaimed, ...errorResponses(400, 401, 409, 413, 415) },
      },
    },
    async (request) => {
      const company = companyOf(request);
      const result = await deps.store.terminals.claimSeries({
        companyId: company.id,
        terminalId: request.params.terminal,
        nome: request.body.nome.trim() || request.params.terminal,
        series: request.body.series,
        at: new Date(),
      });
      if (result.kind === 'taken') {
        throw new ApiError('serie_em_uso', `A série ${result.serie} já é usada por outro terminal desta empresa (${result.holder.nome}).`, {
          details: [{ field: 'series', message: `série ${result.serie} em uso pelo terminal "${result.holder.nome}" (${result.holder.terminalId})` }],
        });
      }
      const rt = await deps.companies.technicalResponsible();
      return {
        ...(await withNumbering(company.id, result.terminal)),
        responsavel_tecnico: rt ? { cnpj: rt.cnpj, contato: rt.contact, email: rt.email, telefone: rt.phone, csrt: rt.csrt ?? null } : null,
      };
    },
  );

  app.get(
    '/terminais',
    {
      schema: {
        tags: ['terminais'],
        summary: 'Os terminais da empresa e as suas séries',
        response: { 200: Type.Object({ data: Type.Array(TerminalView) }), ...errorResponses(401) },
      },
    },
    async (request) => ({ data: (await deps.store.terminals.listTerminals(companyOf(request).id)).map(view) }),
  );

  app.get(
    '/terminais/:terminal',
    {
      schema: {
        tags: ['terminais'],
        summary: 'Um terminal e as suas séries',
        params: TerminalParams,
        response: { 200: TerminalWithNumbering, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const companyId = companyOf(request).id;
      const found = await deps.store.terminals.getTerminal(companyId, request.params.terminal);
      if (!found) throw notFound('Terminal não encontrado.');
      return withNumbering(companyId, found);
    },
  );

  app.delete(
    '/terminais/:terminal',
    {
      schema: {
        tags: ['terminais'],
        summary: 'Remove o terminal e libera as suas séries (idempotente: 204 também quando não havia)',
        params: TerminalParams,
        response: { 204: Type.Null({ description: 'Removido' }), ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      await deps.store.terminals.removeTerminal(companyOf(request).id, request.params.terminal);
      return reply.code(204).send(null);
    },
  );
};
