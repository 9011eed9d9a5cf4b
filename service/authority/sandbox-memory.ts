// What the sandbox authority remembers (sandbox.ts): the documents it authorized, their events,
// the voided ranges and the manifests, behind one asynchronous interface with two homes. Its own
// SQLite file beside the service's (sandbox-store.ts), for the embedded service; or a schema of
// the service's PostgreSQL database (sandbox-pg-memory.ts), where every service process sharing
// the database sees the same authority, as every client of a SEFAZ sees the same SEFAZ.
//
// The stateful rules run inside `decide`: one transaction, serialized with every other decision
// it could conflict with, from any process, and committed before the answer leaves: a decision
// about one number of an emitter (an authorization) only with those about the same number and
// with the emitter's decisions about ranges or events; those (voiding, events, MDF-e) with every
// decision about the emitter (DecisionScope). A
// decision that could not be made (the store busy or unreachable) throws
// AuthorityUnavailableError: to the caller that is an unknown outcome, as a dropped connection.

export type NfeRow = {
  access_key: string;
  company_id: string;
  cnpj: string;
  model: string;
  serie: number;
  number: number;
  tp_emis: number;
  c_stat: string;
  x_motivo: string;
  n_prot: string;
  received_at: string;
  authorized_at_ms: number;
  prot_nfe: string;
  cancelled_at: string | null;
  cancel_event: string | null;
  cancel_n_prot: string | null;
};

export type NewNfe = Omit<NfeRow, 'cancelled_at' | 'cancel_event' | 'cancel_n_prot'>;

/** An NF-e/NFC-e received and judged past the stateless checks, with the answer it got. */
export type Reception = { access_key: string; cnpj: string; c_stat: string; received_at: string };

export type MdfeState = 'autorizado' | 'encerrado' | 'cancelado';

export type MdfeRow = {
  access_key: string;
  company_id: string;
  cnpj: string;
  serie: number;
  number: number;
  plate: string;
  uf_ini: string;
  uf_fim: string;
  state: MdfeState;
  c_stat: string;
  x_motivo: string;
  n_prot: string;
  received_at: string;
  authorized_at_ms: number;
  prot_mdfe: string;
  closed_at: string | null;
  cancelled_at: string | null;
};

export type NewMdfe = Omit<MdfeRow, 'state' | 'closed_at' | 'cancelled_at'>;

export type EventRow = {
  access_key: string;
  tp_evento: string;
  n_seq: number;
  company_id: string;
  n_prot: string;
  registered_at: string;
  ret_evento: string;
};

export type VoidedRange = {
  company_id: string;
  cnpj: string;
  model: string;
  serie: number;
  first_number: number;
  last_number: number;
  n_prot: string;
  received_at: string;
  ret_inut: string;
};

/** The records a decision reads and writes, inside its transaction. */
export interface SandboxRecords {
  /** The next protocol number (a sequence shared by every document, event and range). */
  nextProtocol(): Promise<number>;
  nfe(key: string): Promise<NfeRow | undefined>;
  /**
   * What an NF-e's authorization is decided on, read at once: the document with this key, the one
   * holding its number, and whether a voided range holds the number.
   */
  nfeAuthorizationFacts(key: string, cnpj: string, model: string, serie: number, number: number): Promise<{ same?: NfeRow; other?: NfeRow; voided: boolean }>;
  /** The first authorized number of the series inside [first, last], if any. */
  authorizedInRange(cnpj: string, model: string, serie: number, first: number, last: number): Promise<number | undefined>;
  insertNfe(row: NewNfe): Promise<void>;
  recordReception(reception: Reception): Promise<void>;
  cancelNfe(key: string, at: string, tpEvento: string, nProt: string): Promise<void>;
  nfeEvent(key: string, tpEvento: string, nSeq: number): Promise<EventRow | undefined>;
  insertNfeEvent(row: EventRow): Promise<void>;
  /** A voided range of the series that overlaps [first, last], if any. */
  voidedOverlap(cnpj: string, model: string, serie: number, first: number, last: number): Promise<{ first: number; last: number } | undefined>;
  insertVoided(row: VoidedRange): Promise<void>;
  mdfe(key: string): Promise<MdfeRow | undefined>;
  mdfeByNumber(cnpj: string, serie: number, number: number): Promise<MdfeRow | undefined>;
  /** An authorized (neither closed nor cancelled) manifest of the plate, the oldest. */
  openMdfeOfPlate(cnpj: string, plate: string): Promise<MdfeRow | undefined>;
  insertMdfe(row: NewMdfe): Promise<void>;
  closeMdfe(key: string, at: string): Promise<void>;
  cancelMdfe(key: string, at: string): Promise<void>;
  /** An event already registered on the manifest with that type and sequence (a duplicate, 631). */
  mdfeEvent(key: string, tpEvento: string, nSeq: number): Promise<EventRow | undefined>;
  insertMdfeEvent(row: EventRow): Promise<void>;
}

/**
 * What a decision is about: an emitter (CNPJ), and one of its numbers (an NF-e's model, series and
 * number) when it touches no other.
 */
export type DecisionScope = { cnpj: string; number?: string };

export interface SandboxMemory {
  /** False once closed: every call then answers "unavailable". */
  readonly open: boolean;
  /** Runs a decision about `scope` (see the header). */
  decide<T>(scope: DecisionScope, decision: (records: SandboxRecords) => Promise<T>): Promise<T>;
  nfe(key: string): Promise<NfeRow | undefined>;
  mdfe(key: string): Promise<MdfeRow | undefined>;
  /** The CNPJ's authorized manifests, neither closed nor cancelled, oldest first. */
  openMdfes(cnpj: string): Promise<{ access_key: string; n_prot: string }[]>;
  close(): Promise<void>;
}
