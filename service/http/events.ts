// A document's registered events as the API shows them (GET /api/v1/nfce/{id}/eventos,
// /api/v1/mdfe/{id}/eventos; docs/api.md): the authority's answer to each (cStat, text, protocol,
// when), what the caller sent, and the event's XML as the fiscal record keeps it (procEventoNFe
// or procEventoMDFe: the signed event and the authority's answer).

import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../base/common/api/schema.ts';

export const EventView = Type.Object({
  tipo: Type.String({ description: 'tpEvento: 110111 cancelamento, 110112 encerramento (MDF-e) ou cancelamento por substituição (NFC-e), 110114, 110115' }),
  descricao: Type.String(),
  sequencia: Type.Integer({ description: 'nSeqEvento' }),
  status: Type.String({ description: 'cStat da autoridade (135: registrado)' }),
  motivo: Type.String(),
  protocolo: Nullable(Type.String()),
  registrado_em: Type.String({ description: 'dhRegEvento, horário de Brasília' }),
  dados: Type.Record(Type.String(), Type.String(), { description: 'O que o chamador informou no evento' }),
});

export const EventXmlView = Type.Object({
  ...EventView.properties,
  xml: Type.String({ description: 'O evento assinado com a resposta da autoridade (procEventoNFe / procEventoMDFe)' }),
});

export const EventList = Type.Object({ data: Type.Array(EventXmlView, { description: 'Do mais antigo ao mais recente' }) });

export type EventXmlView = Static<typeof EventXmlView>;
