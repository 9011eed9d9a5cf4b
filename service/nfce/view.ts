// An NFC-e as the API shows it (GET, replays, cancellation, webhook `dados`; docs/api.md, "NFC-e"):
// its fields, instants in Brasília time with their offset.

import { randomUUID } from 'node:crypto';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { firstText } from '../../fiscal/xml.ts';
import type { EventXmlView } from '../http/events.ts';
import type { WebhookEvent } from '../webhooks/store.ts';
import type { NfceView } from './schemas.ts';
import type { NfceEventOf, NfceRecord } from './store.ts';

const brasilia = (instant: string | null): string | null => (instant === null ? null : formatBrasilia(new Date(instant)));

export function nfceView(d: NfceRecord): NfceView {
  return {
    id: d.id,
    chave: d.chave,
    numero: d.numero,
    serie: d.serie,
    status: d.status,
    codigo_status: d.codigoStatus,
    motivo: d.motivo,
    protocolo: d.protocolo,
    autorizado_em: brasilia(d.autorizadoEm),
    cancelado_em: brasilia(d.canceladoEm),
    protocolo_cancelamento: d.protocoloCancelamento,
    codigo_status_cancelamento: d.cancelamentoCodigoStatus,
    motivo_cancelamento: d.cancelamentoMotivo,
    emitido_em: formatBrasilia(new Date(d.dhEmi)),
    valor_total: d.valorTotal,
    qrcode: d.qrcode,
    url_consulta: d.urlConsulta,
    contingencia: d.contingencia,
    ambiente: d.ambiente,
    referencia_externa: d.idempotencyKey,
    criado_em: formatBrasilia(new Date(d.createdAt)),
  };
}

export type NfceEventType = 'nfce.autorizada' | 'nfce.rejeitada' | 'nfce.cancelada';

/**
 * The webhook event of a state change (docs/api.md, "NFC-e"): built inside the transaction that
 * makes the change, from the document in its new state, so `dados` is what GET shows right after.
 */
export function nfceWebhookEvent(tipo: NfceEventType): NfceEventOf {
  return (document: NfceRecord): WebhookEvent => {
    const eventId = randomUUID();
    const createdAt = new Date();
    const payload = JSON.stringify({ id: eventId, tipo, criado_em: formatBrasilia(createdAt), dados: nfceView(document) });
    return { eventId, companyId: document.companyId, tipo, payload, createdAt };
  };
}

const EVENT_NAMES: Record<string, string> = { '110111': 'Cancelamento', '110112': 'Cancelamento por substituição' };

/** A stored event (procEventoNFe) as GET /nfce/{id}/eventos shows it: read from the XML itself, the fiscal record. */
export function nfceEventView(procEvento: string): EventXmlView {
  const at = procEvento.indexOf('<retEvento');
  const [evento, answer] = at < 0 ? [procEvento, ''] : [procEvento.slice(0, at), procEvento.slice(at)];
  const tpEvento = firstText(evento, 'tpEvento') ?? '';
  const substitute = firstText(evento, 'chNFeRef');
  const registered = firstText(answer, 'dhRegEvento');
  return {
    tipo: tpEvento,
    descricao: EVENT_NAMES[tpEvento] ?? tpEvento,
    sequencia: Number(firstText(evento, 'nSeqEvento') ?? '1'),
    status: firstText(answer, 'cStat') ?? '',
    motivo: firstText(answer, 'xMotivo') ?? '',
    protocolo: firstText(answer, 'nProt') ?? null,
    registrado_em: registered ? formatBrasilia(new Date(registered)) : '',
    dados: { justificativa: firstText(evento, 'xJust') ?? '', ...(substitute && { chave_substituta: substitute }) },
    xml: procEvento,
  };
}
