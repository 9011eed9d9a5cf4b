// The terminals part of the service store (ServiceStore.terminals): the checkouts of a company
// and the NFC-e series each one holds (docs/api.md, "Terminals and series"). Each operation is
// one transaction, so two terminals claiming the same series at the same moment cannot both get
// it.

export type TerminalRecord = {
  terminalId: string;
  nome: string;
  /** The series this terminal holds, ascending. */
  series: number[];
  createdAt: string;
  updatedAt: string;
};

export type SeriesClaim = {
  companyId: string;
  terminalId: string;
  nome: string;
  /** The whole set the terminal issues in: what it held and is not listed here is released. */
  series: readonly number[];
  at: Date;
};

export type SeriesClaimResult =
  | { kind: 'ok'; terminal: TerminalRecord; changed: boolean }
  /** Nothing changed: `serie` is held by another terminal of the company. */
  | { kind: 'taken'; serie: number; holder: { terminalId: string; nome: string } };

export interface TerminalStore {
  /**
   * Registers the terminal (or renames it) and makes `series` its whole set of series, in one
   * transaction; refused as a whole when any of them is another terminal's. The same claim
   * again changes nothing (`changed: false`).
   */
  claimSeries(claim: SeriesClaim): Promise<SeriesClaimResult>;
  getTerminal(companyId: string, terminalId: string): Promise<TerminalRecord | undefined>;
  /** The company's terminals, by name. */
  listTerminals(companyId: string): Promise<TerminalRecord[]>;
  /** Forgets the terminal and frees its series; false when it was not registered. */
  removeTerminal(companyId: string, terminalId: string): Promise<boolean>;
}
