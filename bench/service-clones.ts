// Documents cloned in the service's SQLite database, so that a bench grows a company's history to
// hundreds of thousands of documents in seconds: each clone is a real document issued through the
// API (its XML, protocol, QR Code) under a new id, number, key and emission instant.

import type Database from 'better-sqlite3';

export type NfceClone = {
  id: string;
  numero: number;
  chave: string;
  /** ide/dhEmi (Brasília with offset) and the authorization instant. */
  dh: string;
  /** created_at/updated_at (UTC ISO). */
  at: string;
  /** The id of the NFC-e cloned. */
  seed: string;
  /** Its referencia_externa (the idempotency key), or null. */
  referencia: string | null;
};

/** Inserts a clone of a stored NFC-e: the statement prepared once, run per clone. */
export function nfceCloner(db: Database.Database): (clone: NfceClone) => void {
  const statement = db.prepare(
    `INSERT INTO nfce_documents (id, company_id, idempotency_key, serie, numero, chave, cnf, dh_emi, tp_emis, contingencia, ambiente,
       request_json, received_xml, signed_xml, qrcode, url_consulta, valor_total, status, codigo_status, motivo, protocolo,
       autorizado_em, cancelado_em, protocolo_cancelamento, cancelamento_codigo_status, cancelamento_motivo, nfe_proc, evento_xml,
       attempts, next_attempt_at, last_error, created_at, updated_at)
     SELECT @id, company_id, @referencia, serie, @numero, @chave, cnf, @dh, tp_emis, contingencia, ambiente, request_json, received_xml, signed_xml,
       qrcode, url_consulta, valor_total, status, codigo_status, motivo, protocolo, @dh, CASE WHEN cancelado_em IS NULL THEN NULL ELSE @dh END,
       protocolo_cancelamento, cancelamento_codigo_status, cancelamento_motivo, nfe_proc, evento_xml, attempts, NULL, NULL, @at, @at
     FROM nfce_documents WHERE id = @seed`,
  );
  return (clone) => void statement.run(clone);
}
