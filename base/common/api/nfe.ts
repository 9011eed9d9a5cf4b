// The NF-e de devolução's part of the API contract (docs/api.md, "NF-e de devolução"): the body
// of a return, the 202 and the document as the service shows it. Written once as TypeBox
// schemas: the service validates, serializes and documents with them; the terminal's client
// takes its types from them.

import { Type, type Static } from '@sinclair/typebox';
import { AccessKey, Nullable, ReferenciaExterna, strict } from './schema.ts';

const Endereco = Type.Object(
  {
    logradouro: Type.String({ description: 'Logradouro (xLgr)' }),
    numero: Type.String({ description: 'Número (nro)' }),
    complemento: Type.Optional(Type.String({ description: 'Complemento (xCpl)' })),
    bairro: Type.String({ description: 'Bairro' }),
    codigo_municipio: Type.String({ description: 'Código IBGE do município, 7 dígitos, da UF informada' }),
    municipio: Type.String({ description: 'Nome do município' }),
    uf: Type.String({ description: 'UF; diferente da UF da empresa, a devolução é interestadual (idDest 2, CFOP 2xxx)' }),
    cep: Type.Optional(Type.String({ description: 'CEP, 8 dígitos' })),
    telefone: Type.Optional(Type.String({ description: 'Telefone, 6 a 14 dígitos' })),
  },
  { ...strict, description: 'Endereço de quem devolve (enderDest). Sem ele, a devolução é no balcão da loja: operação interna (idDest 1)' },
);

const Destinatario = Type.Object(
  {
    cpf: Type.Optional(Type.String({ description: 'CPF de quem devolve (11 dígitos)' })),
    cnpj: Type.Optional(Type.String({ description: 'CNPJ de quem devolve: 14 caracteres, dígitos ou letras maiúsculas (CNPJ alfanumérico)' })),
    nome: Type.Optional(Type.String({ description: 'Nome (2 a 60 caracteres); padrão: o da NFC-e, ou "CONSUMIDOR"' })),
    endereco: Type.Optional(Endereco),
  },
  {
    ...strict,
    description:
      'Quem devolve (dest da NF-e). Obrigatório com cpf ou cnpj quando a NFC-e não identificou o consumidor; quando identificou, ' +
      'é esse consumidor (um documento diferente é recusado) e aqui se pode informar só o nome e o endereço.',
  },
);

export const DevolucaoBody = Type.Object(
  {
    chave_nfce: AccessKey('Chave de acesso da NFC-e autorizada desta empresa em que as mercadorias foram vendidas'),
    itens: Type.Array(
      Type.Object(
        {
          numero_item: Type.Integer({ minimum: 1, maximum: 990, description: 'nItem do item na NFC-e (1 = o primeiro)' }),
          quantidade: Type.String({
            description: 'Quantidade devolvida na unidade comercial do item, decimal com ponto, até 4 casas: no máximo o vendido menos o já devolvido',
          }),
        },
        strict,
      ),
      { minItems: 1, maxItems: 990, description: 'Os itens devolvidos; cada item da NFC-e no máximo uma vez' },
    ),
    justificativa: Type.String({ minLength: 15, maxLength: 255, description: 'Por que as mercadorias voltaram (15 a 255 caracteres); vai em infAdic/infCpl' }),
    destinatario: Type.Optional(Destinatario),
    referencia_externa: Type.Optional(ReferenciaExterna),
  },
  {
    ...strict,
    examples: [
      {
        chave_nfce: '35261112345678000195650010000000711000000710',
        itens: [{ numero_item: 1, quantidade: '1' }],
        justificativa: 'Produto devolvido pelo cliente com defeito de fabricação',
        destinatario: { cpf: '52998224725', nome: 'Maria Aparecida Souza' },
      },
    ],
    description:
      'NF-e de devolução (modelo 55, finNFe 4, tpNF 0) referenciando a NFC-e (NFref/refNFe). Os valores de cada item são ' +
      'proporcionais à quantidade devolvida, em centavos, com arredondamento acumulado: a devolução que completa a quantidade ' +
      'vendida leva o resto, e as devoluções de um item somam exatamente o valor vendido.',
  },
);
export type DevolucaoBody = Static<typeof DevolucaoBody>;

export const NfeAccepted = Type.Object({
  id: Type.String({ description: 'Identificador da NF-e no serviço' }),
  tipo: Type.Literal('devolucao'),
  situacao: Type.Literal('processando'),
  serie: Type.Integer({ description: 'Série do modelo 55 (da empresa; 1)' }),
  numero: Type.Integer({ description: 'Número alocado pelo serviço' }),
  chave: Type.String({ description: 'Chave de acesso da NF-e (definitiva)' }),
  message: Type.String(),
});

const NfeViewFields = {
  id: Type.String(),
  tipo: Type.Literal('devolucao'),
  situacao: Type.Union([Type.Literal('processando'), Type.Literal('autorizado'), Type.Literal('rejeitado')]),
  status: Nullable(
    Type.String({ description: 'cStat da autoridade fiscal (100: autorizada); null em processamento ou quando o serviço recusou antes de enviar' }),
  ),
  motivo: Nullable(Type.String({ description: 'xMotivo da autoridade fiscal' })),
  serie: Type.Integer(),
  numero: Type.Integer(),
  chave: Type.String(),
  chave_nfce: Type.String({ description: 'Chave da NFC-e referenciada' }),
  nfce_id: Type.String({ description: 'id da NFC-e referenciada no serviço' }),
  protocolo: Nullable(Type.String()),
  autorizado_em: Nullable(Type.String()),
  emitido_em: Type.String(),
  valor_total: Type.String({ description: 'vNF, decimal' }),
  justificativa: Type.String(),
  itens: Type.Array(
    Type.Object({
      numero_item: Type.Integer({ description: 'nItem na NFC-e' }),
      codigo: Type.String(),
      descricao: Type.String(),
      unidade: Type.String(),
      quantidade: Type.String({ description: 'Quantidade devolvida, decimal' }),
      valor: Type.String({ description: 'Valor devolvido do item (decimal)' }),
    }),
  ),
  ambiente: Type.Union([Type.Literal('homologacao'), Type.Literal('producao')]),
  referencia_externa: Nullable(Type.String()),
  criado_em: Type.String(),
};

export const NfeView = Type.Object(NfeViewFields);
export type NfeView = Static<typeof NfeView>;

/** A return as lists show it: without its items (GET /nfe/{id} has them). */
const { itens: _itens, ...NfeSummaryFields } = NfeViewFields;
export const NfeSummaryView = Type.Object(NfeSummaryFields);
export type NfeSummaryView = Static<typeof NfeSummaryView>;

export const NfeReplay = Type.Object({
  ...NfeViewFields,
  idempotent_replay: Type.Boolean({ description: 'true: repetição de uma devolução já autorizada; nada novo foi emitido' }),
});
export type NfeAccepted = Static<typeof NfeAccepted>;
export type NfeReplay = Static<typeof NfeReplay>;
