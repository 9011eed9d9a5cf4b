// The NFC-e's part of the API contract (docs/api.md, "NFC-e"): the receipt a client sends
// (NfceRequest), what the service answers (the 202, the document, the replay, an inutilização)
// and the bodies of a cancellation and an inutilização. Written once as TypeBox schemas: the
// service validates, serializes and documents with them; the fiscal builder
// (fiscal/nfce/types.ts) and the terminal's client take their types from them.
//
// The request schema checks shape and types only (a 400). Its values (decimal strings, codes,
// sums, NCM, GTIN...) are the fiscal builder's to check, naming every broken field at once (a
// 422 validacao), so no pattern here.

import { Type, type Static } from '@sinclair/typebox';
import { AccessKey, Justificativa, Nullable, ReferenciaExterna, strict } from './schema.ts';

// --- the request: POST /api/v1/nfce's JSON receipt ------------------------------------------

const str = (description: string) => Type.String({ description });
const CNPJ_FORM = '14 caracteres sem pontuação: dígitos ou letras maiúsculas (CNPJ alfanumérico), os dois últimos numéricos';
const opt = (description: string) => Type.Optional(Type.String({ description }));

const Card = Type.Object(
  {
    tpIntegra: Type.Optional(Type.String({ default: '2', description: '1: TEF/POS integrado (exige CNPJ e cAut); 2: maquininha não integrada (padrão)' })),
    CNPJ: opt(`CNPJ da credenciadora / instituição de pagamento (obrigatório com tpIntegra 1); ${CNPJ_FORM}`),
    tBand: opt('Bandeira do cartão (01 Visa, 02 Mastercard, ...)'),
    cAut: opt('Número de autorização da operação (obrigatório com tpIntegra 1)'),
    CNPJReceb: opt(`CNPJ do beneficiário do pagamento; ${CNPJ_FORM}`),
    idTermPag: opt('Identificador do terminal de pagamento'),
  },
  { ...strict, description: 'Grupo do cartão: obrigatório com tPag 03, 04 ou 17 (sem ele, rejeição 391; o PIX 17 sem ele é recusado com 422)' },
);

/** One variant group of a tax (its group names and fields: fiscal/tax-groups.ts, which checks them: 422 naming the field). */
const TaxGroup = (tax: string, example: string) =>
  Type.Record(Type.String(), Type.Record(Type.String(), Type.String()), {
    description: `${tax}: um único grupo de variante, ex.: ${example}`,
  });

const Product = Type.Object(
  {
    cProd: str('Código do produto'),
    cEAN: str('GTIN ou "SEM GTIN"'),
    xProd: str('Descrição'),
    NCM: str('NCM, 8 dígitos'),
    CFOP: str('CFOP, 4 dígitos'),
    uCom: str('Unidade comercial'),
    qCom: str('Quantidade comercial (decimal)'),
    vUnCom: str('Valor unitário comercial (decimal)'),
    vProd: str('Valor do item: qCom × vUnCom (decimal, 2 casas)'),
    cEANTrib: str('GTIN da unidade tributável ou "SEM GTIN"'),
    uTrib: str('Unidade tributável'),
    qTrib: str('Quantidade tributável (decimal)'),
    vUnTrib: str('Valor unitário tributável (decimal)'),
    indTot: str('"1": compõe o total'),
    vDesc: opt('Desconto do item (decimal)'),
  },
  strict,
);

const Reduction = Type.Optional(
  Type.Object(
    { pRedAliq: opt('Percentual de redução da alíquota'), pAliqEfet: opt('Alíquota efetiva') },
    { ...strict, description: 'Redução de alíquota (gRed)' },
  ),
);

const IbsCbs = Type.Object(
  {
    CST: str('CST do IBS/CBS, 3 dígitos (ex.: 000 tributação integral, 200 alíquota reduzida, 410 imunidade)'),
    cClassTrib: str('Classificação tributária do IBS/CBS, 6 dígitos (ex.: 000001), do mesmo CST'),
    gIBSCBS: Type.Optional(
      Type.Object(
        {
          vBC: opt('Base de cálculo: valor do item menos o desconto (a partir de 2027, sem o IBS e a CBS contidos no preço)'),
          gIBSUF: Type.Optional(Type.Object({ pIBSUF: opt('Alíquota do IBS da UF'), gRed: Reduction, vIBSUF: opt('Valor do IBS da UF') }, strict)),
          gIBSMun: Type.Optional(
            Type.Object({ pIBSMun: opt('Alíquota do IBS do município'), gRed: Reduction, vIBSMun: opt('Valor do IBS do município') }, strict),
          ),
          vIBS: opt('vIBSUF + vIBSMun'),
          gCBS: Type.Optional(Type.Object({ pCBS: opt('Alíquota da CBS'), gRed: Reduction, vCBS: opt('Valor da CBS') }, strict)),
        },
        {
          ...strict,
          description:
            'Valores do IBS/CBS: opcionais; o serviço calcula os que faltam e confere os informados (alíquotas vigentes na data de emissão, valores com tolerância de 0,01)',
        },
      ),
    ),
  },
  {
    ...strict,
    description:
      'Reforma tributária: classificação do IBS/CBS do item. Ausente: a classificação padrão da empresa. Só vai para a NFC-e quando a empresa informa IBS/CBS (CRT 3, ou Simples com a opção ativada)',
  },
);

const Item = Type.Object(
  {
    prod: Product,
    imposto: Type.Object(
      {
        ICMS: TaxGroup('ICMS', '{ "ICMS40": { "orig": "0", "CST": "40" } } ou { "ICMSSN102": { "orig": "0", "CSOSN": "102" } }'),
        PIS: Type.Optional(TaxGroup('PIS', '{ "PISNT": { "CST": "07" } }')),
        COFINS: Type.Optional(TaxGroup('COFINS', '{ "COFINSNT": { "CST": "07" } }')),
        vTotTrib: opt('Tributos aproximados do item (Lei 12.741/2012)'),
        IBSCBS: Type.Optional(IbsCbs),
      },
      strict,
    ),
  },
  strict,
);

const Payment = Type.Object(
  {
    tPag: str(
      'Forma de pagamento: 01 dinheiro, 03 crédito, 04 débito, 17 PIX dinâmico, 23 PIX Automático, 24 TEF Book Transfer, ... (docs/fiscal.md, "Payments")',
    ),
    vPag: str('Valor pago (decimal)'),
    indPag: opt('0 à vista, 1 a prazo'),
    xPag: opt('Descrição da forma (tPag 99)'),
    dPag: opt('Data do pagamento, AAAA-MM-DD'),
    card: Type.Optional(Card),
  },
  strict,
);

export const NfceRequest = Type.Object(
  {
    ide: Type.Object(
      {
        serie: Type.Integer({ minimum: 0, maximum: 999, description: 'Série' }),
        nNF: Type.Integer({ minimum: 1, maximum: 999_999_999, description: 'Número da NFC-e, escolhido pelo chamador' }),
        natOp: opt('Natureza da operação (padrão VENDA)'),
        indPres: opt('Indicador de presença (padrão 1, presencial)'),
      },
      strict,
    ),
    det: Type.Array(Item, { minItems: 1, maxItems: 990, description: 'Itens' }),
    total: Type.Object({ vProd: str('Soma dos itens'), vNF: str('Valor da nota'), vDesc: opt('Desconto total') }, strict),
    pag: Type.Array(Payment, { minItems: 1, maxItems: 100, description: 'Pagamentos' }),
    vTroco: opt('Troco (decimal)'),
    card: Type.Optional(Card),
    dest: Type.Optional(
      Type.Object(
        { cpf: opt('CPF do consumidor'), cnpj: opt(`CNPJ do consumidor; ${CNPJ_FORM}`), idEstrangeiro: opt('Documento de estrangeiro'), xNome: opt('Nome') },
        {
          ...strict,
          description: 'Consumidor: opcional até R$ 10.000,00; acima disso (ou do limite da UF), o CPF ou o CNPJ é obrigatório (NT 2026.002, rejeição 750)',
        },
      ),
    ),
    vTotTrib: opt('Total aproximado de tributos; calculado quando ausente'),
    infCpl: opt('Informações complementares'),
    infAdFisco: opt('Informações de interesse do fisco'),
    referencia_externa: Type.Optional(ReferenciaExterna),
  },
  { ...strict, description: 'NFC-e: valores monetários e quantidades como texto decimal' },
);
export type NfceRequest = Static<typeof NfceRequest>;

// --- the answers ----------------------------------------------------------------------------

/** What the service last learned of the company's tax authority (authority/availability.ts). */
export const AuthorityStatus = Type.Object(
  {
    situacao: Type.Union([Type.Literal('disponivel'), Type.Literal('indisponivel'), Type.Literal('desconhecida')]),
    desde: Nullable(Type.String({ description: 'Desde quando, horário de Brasília (null: desconhecida)' })),
  },
  {
    description:
      'A autoridade fiscal como o serviço a viu na última chamada desta empresa: indisponivel = sem resposta (a NFC-e espera; ' +
      'um PDV pode emitir em contingência offline), disponivel = respondeu, desconhecida = nenhuma chamada ainda',
  },
);

export const NfceAccepted = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Identificador da NFC-e' }),
  chave: Type.String({ description: 'Chave de acesso (44 posições), definitiva desde já' }),
  status: Type.Literal('processando'),
  message: Type.String(),
  autoridade: AuthorityStatus,
});

export const STATUSES = ['processando', 'autorizado', 'rejeitado', 'cancelado'] as const;

const NfceViewFields = {
  id: Type.String({ format: 'uuid' }),
  chave: Type.String({ description: 'Chave de acesso' }),
  numero: Type.Integer({ description: 'nNF' }),
  serie: Type.Integer(),
  status: Type.Union(
    STATUSES.map((s) => Type.Literal(s)),
    { description: 'processando, autorizado, rejeitado ou cancelado' },
  ),
  codigo_status: Nullable(
    Type.String({
      description: 'cStat da autorização (ou da rejeição) pela autoridade fiscal; null enquanto processando. Cancelada, continua o da autorização',
    }),
  ),
  motivo: Nullable(Type.String({ description: 'xMotivo da autorização (ou da rejeição)' })),
  protocolo: Nullable(Type.String({ description: 'Protocolo de autorização' })),
  autorizado_em: Nullable(Type.String({ description: 'Data e hora da autorização (dhRecbto), horário de Brasília' })),
  cancelado_em: Nullable(Type.String({ description: 'Data e hora do cancelamento, horário de Brasília' })),
  protocolo_cancelamento: Nullable(Type.String({ description: 'Protocolo do evento de cancelamento' })),
  codigo_status_cancelamento: Nullable(
    Type.String({ description: 'cStat do evento de cancelamento (135: registrado); null sem evento guardado (cancelamento sabido por consulta)' }),
  ),
  motivo_cancelamento: Nullable(Type.String({ description: 'xMotivo do evento de cancelamento' })),
  emitido_em: Type.String({ description: 'dhEmi, horário de Brasília' }),
  valor_total: Type.String({ description: 'vNF (decimal)' }),
  qrcode: Nullable(Type.String({ description: 'Texto do QR Code (null até a NFC-e ser assinada)' })),
  url_consulta: Type.String({ description: 'URL de consulta pela chave de acesso' }),
  contingencia: Type.Boolean({ description: 'Emitida em contingência offline (tpEmis 9)' }),
  ambiente: Type.Union([Type.Literal('homologacao'), Type.Literal('producao')]),
  referencia_externa: Nullable(Type.String({ description: 'Chave de idempotência da emissão' })),
  criado_em: Type.String({ description: 'Recebida pelo serviço em, horário de Brasília' }),
};

export const NfceView = Type.Object({
  ...NfceViewFields,
  autoridade: Type.Optional(AuthorityStatus),
});
export type NfceView = Static<typeof NfceView>;

export const NfceReplay = Type.Object({
  ...NfceViewFields,
  idempotent_replay: Type.Boolean({ description: 'true: repetição de uma emissão já autorizada; nada novo foi emitido' }),
});

export type NfceAccepted = Static<typeof NfceAccepted>;
export type NfceReplay = Static<typeof NfceReplay>;
export type AuthorityStatus = Static<typeof AuthorityStatus>;
export type NfceStatus = (typeof STATUSES)[number];

export const CancelBody = Type.Object(
  {
    justificativa: Justificativa('Motivo do cancelamento'),
    chave_substituta: Type.Optional(AccessKey('Cancelamento por substituição (evento 110112, até 168 h): chave da NFC-e de contingência que a substituiu')),
  },
  { ...strict, examples: [{ justificativa: 'Cliente desistiu da compra no caixa' }] },
);
export type CancelBody = Static<typeof CancelBody>;

export const VoidBody = Type.Object(
  {
    serie: Type.Integer({ minimum: 0, maximum: 999 }),
    numero_inicial: Type.Integer({ minimum: 1, maximum: 999_999_999 }),
    numero_final: Type.Integer({ minimum: 1, maximum: 999_999_999 }),
    justificativa: Justificativa('Motivo da inutilização'),
  },
  { ...strict, examples: [{ serie: 1, numero_inicial: 900, numero_final: 905, justificativa: 'Numeração pulada por falha no sistema do caixa' }] },
);
export type VoidBody = Static<typeof VoidBody>;

export const VoidView = Type.Object({
  protocolo: Type.String(),
  codigo_status: Type.String({ description: '102: inutilização homologada' }),
  motivo: Type.String(),
});

export type VoidView = Static<typeof VoidView>;
