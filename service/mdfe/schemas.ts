// HTTP schemas of the MDF-e routes (TypeBox: validated by fastify, typed by the type provider,
// published in the OpenAPI document).
//
// The split between 400 and 422: the schema checks shape (types, required fields, formats of
// codes: 7-digit municipality, 14-character CNPJ (letters allowed), 11-digit CPF, 8-digit CEP,
// two-letter UF, 44-position access keys) and
// answers 400 `requisicao_invalida`; what needs reference data or arithmetic (the municipality
// exists and belongs to the stated UF, check digits, the UF exists, decimal limits) is the
// fiscal builder's, answered 422 `validacao`. The tax authority's content rules (745, 699, 698,
// 725, 578, 663) are neither: a manifest that breaks them is sent and rejected by the authority,
// so the groups they concern (seg, prodPred, infContratante, tpTransp/prop, infPercurso) are
// optional here.

import { Type, type TSchema } from '@sinclair/typebox';
import { AccessKey, Cnpj as CnpjOf, Cpf as CpfOf, Justificativa, ReferenciaExterna, strict } from '../../base/common/api/schema.ts';
import { UFS } from '../../fiscal/br/uf.ts';
import { sampleMdfeRequest } from '../../fiscal/samples.ts';
import { EventView } from '../http/events.ts';
import { dayParams, OffsetPageEnvelope, pagingParams } from '../http/lists.ts';
import { MAX_OFFSET } from '../paging.ts';
import { MDFE_SITUACOES } from './store.ts';

const Text = (description: string, maxLength = 255) => Type.String({ minLength: 1, maxLength, description });
const Digits = (n: number, description: string) => Type.String({ pattern: `^[0-9]{${n}}$`, description: `${description} (${n} dígitos)` });
/** One of the 27 UFs (fiscal/br/uf.ts), declared as the list, so a client and a tester know them. */
const Uf = (description: string) =>
  Type.Union(
    UFS.map((uf) => Type.Literal(uf)),
    { description: `${description} (sigla, ex.: SP)` },
  );
const Code = (description: string) => Type.String({ minLength: 1, maxLength: 2, description });
/** The specification shows these as JSON numbers; a decimal string is accepted too. */
const Decimal = (description: string) => Type.Union([Type.Number({ minimum: 0 }), Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })], { description });
const Kg = (description: string) => Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]+$' })], { description });
const OneOrMany = <T extends TSchema>(item: T, max: number, description: string) =>
  Type.Union([item, Type.Array(item, { minItems: 1, maxItems: max })], { description });
const Cnpj = CnpjOf('CNPJ');
const Cpf = CpfOf('CPF');

const LoadingMunicipality = Type.Object(
  { cMunCarrega: Digits(7, 'Código IBGE do município de carregamento'), xMunCarrega: Text('Nome do município', 60) },
  strict,
);

const RouteState = Type.Object({ UFPer: Uf('UF de percurso') }, strict);

const Ide = Type.Object(
  {
    nMDF: Type.Integer({ minimum: 1, maximum: 999_999_999, description: 'Número do manifesto, escolhido pelo emitente' }),
    serie: Type.Integer({ minimum: 0, maximum: 999, description: 'Série' }),
    modal: Type.Optional(Type.String({ description: 'Modal: 1 rodoviário (o único emitido aqui)' })),
    tpEmit: Type.String({ description: '1 prestador de serviço de transporte, 2 carga própria, 3 CT-e globalizado' }),
    UFIni: Uf('UF de início'),
    UFFim: Uf('UF de fim'),
    infMunCarrega: Type.Array(LoadingMunicipality, { minItems: 1, maxItems: 50 }),
    infPercurso: Type.Optional(Type.Array(RouteState, { maxItems: 25, description: 'UFs de percurso, na ordem da viagem' })),
    dhIniViagem: Type.Optional(Type.String({ format: 'date-time', description: 'Início previsto da viagem' })),
  },
  strict,
);

const Driver = Type.Object({ xNome: Text('Nome do condutor', 60), CPF: Cpf }, strict);

const Owner = Type.Object(
  {
    CNPJ: Type.Optional(Cnpj),
    CPF: Type.Optional(Cpf),
    RNTRC: Digits(8, 'RNTRC do proprietário'),
    xNome: Text('Nome do proprietário', 60),
    IE: Type.Optional(Type.String({ maxLength: 14 })),
    UF: Uf('UF do proprietário'),
    tpProp: Type.String({ description: '0 TAC agregado, 1 TAC independente, 2 outros' }),
  },
  { ...strict, description: 'Proprietário do veículo de terceiros (somente junto com tpTransp)' },
);

const Vehicle = Type.Object(
  {
    cInt: Type.Optional(Text('Código interno', 10)),
    placa: Type.String({ minLength: 7, maxLength: 8, description: 'Placa (ABC1D23 ou ABC1234)' }),
    RENAVAM: Type.Optional(Type.String({ pattern: '^[0-9]{9,11}$' })),
    tara: Kg('Tara em kg'),
    capKG: Type.Optional(Kg('Capacidade em kg')),
    capM3: Type.Optional(Kg('Capacidade em m³')),
    prop: Type.Optional(Owner),
    condutor: OneOrMany(Driver, 10, 'Condutor (um objeto) ou condutores (lista de até 10)'),
    tpRod: Type.Optional(Code('Tipo de rodado')),
    tpCar: Type.Optional(Code('Tipo de carroceria')),
    UF: Type.Optional(Uf('UF de licenciamento')),
  },
  strict,
);

const Contractor = Type.Object({ xNome: Type.Optional(Text('Nome', 60)), CNPJ: Type.Optional(Cnpj), CPF: Type.Optional(Cpf) }, strict);

const Payment = Type.Object(
  {
    xNome: Type.Optional(Text('Nome do responsável pelo pagamento', 60)),
    CNPJ: Type.Optional(Cnpj),
    CPF: Type.Optional(Cpf),
    Comp: Type.Array(Type.Object({ tpComp: Code('Tipo do componente'), vComp: Decimal('Valor'), xComp: Type.Optional(Text('Descrição', 60)) }, strict), {
      minItems: 1,
      maxItems: 1000,
    }),
    vContrato: Decimal('Valor do contrato'),
    indPag: Type.String({ description: '0 à vista, 1 a prazo' }),
    infBanc: Type.Object(
      {
        PIX: Type.Optional(Text('Chave PIX', 60)),
        codBanco: Type.Optional(Text('Banco', 5)),
        codAgencia: Type.Optional(Text('Agência', 10)),
        CNPJIPEF: Type.Optional(Cnpj),
      },
      strict,
    ),
  },
  strict,
);

const Road = Type.Object(
  {
    RNTRC: Type.Optional(Digits(8, 'RNTRC do transportador')),
    veicTracao: Vehicle,
    infContratante: Type.Optional(Type.Array(Contractor, { maxItems: 1000 })),
    infPag: Type.Optional(Type.Array(Payment, { maxItems: 1000 })),
  },
  strict,
);

const UnloadingMunicipality = Type.Object(
  {
    cMunDescarga: Digits(7, 'Código IBGE do município de descarregamento'),
    xMunDescarga: Text('Nome do município', 60),
    infCTe: Type.Optional(Type.Array(Type.Object({ chCTe: AccessKey('Chave do CT-e') }, strict), { maxItems: 20_000 })),
    infNFe: Type.Optional(Type.Array(Type.Object({ chNFe: AccessKey('Chave da NF-e') }, strict), { maxItems: 20_000 })),
  },
  strict,
);

const Insurance = Type.Object(
  {
    respSeg: Type.String({ description: '1 emitente, 2 contratante' }),
    CNPJ: Type.Optional(Cnpj),
    CPF: Type.Optional(Cpf),
    xSeg: Type.Optional(Text('Seguradora', 30)),
    seg_CNPJ: Type.Optional(Cnpj),
    nApol: Type.Optional(Text('Apólice', 20)),
    nAver: Type.Optional(Type.Union([Text('Averbação', 40), Type.Array(Text('Averbação', 40), { minItems: 1, maxItems: 1000 })])),
  },
  strict,
);

const Product = Type.Object(
  {
    tpCarga: Code('Tipo de carga (01 a 12)'),
    xProd: Text('Produto predominante', 120),
    cEAN: Type.Optional(Type.String({ maxLength: 14 })),
    NCM: Type.Optional(Type.String({ pattern: '^[0-9]{2,8}$' })),
    infLotacao: Type.Optional(Type.Object({ cepCarrega: Digits(8, 'CEP de carregamento'), cepDescarrega: Digits(8, 'CEP de descarregamento') }, strict)),
  },
  strict,
);

/** The request body's example in the OpenAPI document: the sample manifest (SP to BA through MG) every test and bench issues. */
const MDFE_EXAMPLE = sampleMdfeRequest({ nMDF: 1, placa: 'ABC1D23' });

export const MdfeBody = Type.Object(
  {
    ide: Ide,
    tpTransp: Type.Optional(Type.String({ description: '1 ETC, 2 TAC, 3 CTC; somente junto com rodo.veicTracao.prop' })),
    rodo: Road,
    infDoc: Type.Object({ infMunDescarga: Type.Array(UnloadingMunicipality, { minItems: 1, maxItems: 1000 }) }, strict),
    seg: Type.Optional(OneOrMany(Insurance, 1000, 'Seguro da carga')),
    prodPred: Type.Optional(Product),
    tot: Type.Object({ vCarga: Decimal('Valor da carga'), cUnid: Code('01 KG, 02 TON'), qCarga: Decimal('Quantidade') }, strict),
    lacres: Type.Optional(Type.Array(Type.Object({ nLacre: Text('Lacre', 60) }, strict), { maxItems: 1000 })),
    infAdic: Type.Optional(
      Type.Object({ infAdFisco: Type.Optional(Text('Informações ao fisco', 2000)), infCpl: Type.Optional(Text('Informações complementares', 5000)) }, strict),
    ),
    referencia_externa: Type.Optional(ReferenciaExterna),
  },
  { ...strict, description: 'MDF-e rodoviário (docs/api.md, MDF-e)', examples: [MDFE_EXAMPLE] },
);

export const IdParams = Type.Object({ id: Type.String({ description: 'mdfe_id' }) });

export const CloseBody = Type.Object(
  {
    uf: Uf('UF de encerramento'),
    codigo_municipio: Digits(7, 'Código IBGE do município de encerramento'),
    data: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'Data do encerramento, AAAA-MM-DD (padrão: hoje em Brasília)' })),
  },
  { ...strict, examples: [{ uf: 'BA', codigo_municipio: '2927408' }] },
);

export const CancelBody = Type.Object(
  { justificativa: Justificativa('Motivo do cancelamento') },
  { ...strict, examples: [{ justificativa: 'Viagem desistida pelo contratante' }] },
);

export const ListQuery = Type.Object(
  {
    ...pagingParams,
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: `Itens a pular, até ${MAX_OFFSET} (mais fundo, use cursor); não se combina com cursor`,
      }),
    ),
    status: Type.Optional(Type.String({ pattern: '^[0-9]{3,4}$', description: 'cStat da autoridade (100 = autorizado)' })),
    situacao: Type.Optional(Type.Union(MDFE_SITUACOES.map((s) => Type.Literal(s)))),
    uf_inicio: Type.Optional(Uf('UF de início')),
    uf_fim: Type.Optional(Uf('UF de fim')),
    ...dayParams('emissão'),
  },
  strict,
);

export const RouteBody = Type.Object(
  {
    UFIni: Uf('UF de início'),
    UFFim: Uf('UF de fim'),
    infPercurso: Type.Optional(Type.Array(RouteState, { maxItems: 25, description: 'Percurso a validar, em vez de sugerir um' })),
  },
  { ...strict, examples: [{ UFIni: 'SP', UFFim: 'BA' }] },
);

// --- responses ------------------------------------------------------------------------------

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const DocumentView = Type.Object({
  tipo: Type.Union([Type.Literal('CTe'), Type.Literal('NFe')]),
  chave: Type.String(),
  codigo_municipio_descarga: Type.String(),
});

export { EventList } from '../http/events.ts';

const summaryFields = {
  mdfe_id: Type.String({ format: 'uuid' }),
  chave: Type.String(),
  numero: Type.Integer(),
  serie: Type.Integer(),
  status: Nullable(Type.String({ description: 'cStat da autoridade; 100 = autorizado' })),
  motivo: Nullable(Type.String()),
  protocolo: Nullable(Type.String()),
  autorizado: Type.Boolean(),
  situacao: Type.Union(MDFE_SITUACOES.map((s) => Type.Literal(s))),
  placa: Type.String(),
  uf_inicio: Type.String(),
  uf_fim: Type.String(),
  emitido_em: Type.String(),
  autorizado_em: Nullable(Type.String()),
  encerrado_em: Nullable(Type.String()),
  cancelado_em: Nullable(Type.String()),
  valor_carga: Type.String(),
  ambiente: Type.String(),
  referencia_externa: Nullable(Type.String()),
};

export const MdfeSummary = Type.Object(summaryFields);

export const MdfeView = Type.Object({
  ...summaryFields,
  qrcode: Type.String(),
  documentos: Type.Array(DocumentView),
  eventos: Type.Array(EventView),
  idempotent_replay: Type.Optional(Type.Boolean()),
});

export const MdfeList = OffsetPageEnvelope(MdfeSummary);

export const RouteView = Type.Union([
  Type.Object({ infPercurso: Type.Array(Type.Object({ UFPer: Type.String() })) }),
  Type.Object({ valido: Type.Literal(true) }),
]);

export const KeyParams = Type.Object({ chave: AccessKey('Chave de acesso do MDF-e') }, strict);

export const DriverBody = Type.Object(
  {
    nome: Text('Nome do condutor (2 a 60 caracteres)', 60),
    cpf: Cpf,
  },
  {
    ...strict,
    description: 'Condutor que passa a dirigir o veículo do manifesto (evento 110114)',
    examples: [{ nome: 'Maria Aparecida Souza', cpf: '11144477735' }],
  },
);

export const DocumentsBody = Type.Object(
  {
    codigo_municipio_carregamento: Digits(7, 'Código IBGE do município onde as NF-e foram carregadas'),
    municipio_carregamento: Text('Nome do município de carregamento', 60),
    documentos: Type.Array(
      Type.Object(
        {
          chave: AccessKey('Chave da NF-e'),
          codigo_municipio_descarga: Digits(7, 'Código IBGE do município de descarregamento'),
          municipio_descarga: Text('Nome do município de descarregamento', 60),
        },
        strict,
      ),
      { minItems: 1, maxItems: 2000, description: 'As NF-e incluídas, cada uma com onde será descarregada' },
    ),
  },
  {
    ...strict,
    description: 'NF-e carregadas no caminho, incluídas no manifesto (evento 110115)',
    examples: [
      {
        codigo_municipio_carregamento: '3106200',
        municipio_carregamento: 'Belo Horizonte',
        documentos: [{ chave: '35180834128745000152550010000474281920007498', codigo_municipio_descarga: '2927408', municipio_descarga: 'Salvador' }],
      },
    ],
  },
);

export const OpenManifestsView = Type.Object({
  status: Type.String({ description: 'cStat da autoridade: 111 encontrou MDF-e não encerrados, 112 nenhum' }),
  motivo: Type.String(),
  data: Type.Array(
    Type.Object({
      chave: Type.String(),
      protocolo: Type.String(),
      mdfe_id: Nullable(Type.String({ description: 'O MDF-e neste serviço; null quando emitido fora dele' })),
    }),
  ),
});
