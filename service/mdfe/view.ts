// What the API shows of a manifest (docs/api.md, "MDF-e"): the issuance answer's fields plus `situacao` and the
// facts a caller lists and filters by; the full view adds the linked documents and the events.
// Instants are ISO 8601 in the Brasília zone (docs/api.md, "Errors").

import type { Static } from '@sinclair/typebox';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { EVENT_NAMES } from './issuance.ts';
import type { EventXmlView } from '../http/events.ts';
import type { MdfeSummary, MdfeView } from './schemas.ts';
import type { MdfeDocument, MdfeEventRecord, MdfeRecord } from './store.ts';

const brasilia = (utc: string | null): string | null => (utc === null ? null : formatBrasilia(new Date(utc)));

export function summaryView(r: MdfeRecord): Static<typeof MdfeSummary> {
  return {
    mdfe_id: r.id,
    chave: r.chave,
    numero: r.numero,
    serie: r.serie,
    status: r.status,
    motivo: r.motivo,
    protocolo: r.protocolo,
    // The verdict of the issuance, like `status`: a manifest closed or cancelled later was still
    // authorized (its number consumed); `situacao` tells its state now.
    autorizado: r.situacao === 'autorizado' || r.situacao === 'encerrado' || r.situacao === 'cancelado',
    situacao: r.situacao,
    placa: r.placa,
    uf_inicio: r.ufInicio,
    uf_fim: r.ufFim,
    emitido_em: brasilia(r.emitidoEm)!,
    autorizado_em: brasilia(r.autorizadoEm),
    encerrado_em: brasilia(r.encerradoEm),
    cancelado_em: brasilia(r.canceladoEm),
    valor_carga: r.valorCarga,
    ambiente: r.ambiente,
    referencia_externa: r.referenciaExterna,
  };
}

export function fullView(r: MdfeRecord, documents: readonly MdfeDocument[], events: readonly MdfeEventRecord[]): Static<typeof MdfeView> {
  return {
    ...summaryView(r),
    qrcode: r.qrcode,
    documentos: documents.map((d) => ({ tipo: d.tipo, chave: d.chave, codigo_municipio_descarga: d.codigoMunicipioDescarga })),
    eventos: events.map((e) => {
      const { xml: _xml, ...shown } = eventView(e);
      return shown;
    }),
  };
}

/** A registered event with its XML (GET /mdfe/{id}/eventos). */
export function eventView(e: MdfeEventRecord): EventXmlView {
  return {
    tipo: e.tpEvento,
    descricao: EVENT_NAMES[e.tpEvento] ?? e.tpEvento,
    sequencia: e.nSeq,
    status: e.status,
    motivo: e.motivo,
    protocolo: e.protocolo,
    registrado_em: brasilia(e.registradoEm)!,
    dados: e.dados,
    xml: e.xml,
  };
}
