// What the machine did wrong, in the words of the people who have to fix it. A full disk, a
// read-only or forbidden folder, a port another program holds, a folder that is not there, a
// failing disk: the operating system and SQLite say so in English codes (ENOSPC, SQLITE_FULL,
// EROFS, EACCES, EADDRINUSE, ENOENT, SQLITE_IOERR…), which stay in the log; the cashier and the
// operator get one sentence in Portuguese naming the place and saying what to do. The terminal
// (its screen and status bar), the service (its answers and its console) and the command line
// all read faults through here, so a fault is worded once.
//
// A fault is recognised by its code only (never by parsing English text): Node's errno codes
// on fs, net and child_process errors, better-sqlite3's SqliteError codes (the primary code and
// its extended forms, e.g. SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED).

export type FaultKind = 'disco_cheio' | 'somente_leitura' | 'sem_permissao' | 'porta_em_uso' | 'pasta_ausente' | 'falha_disco';

export type SystemFault = {
  kind: FaultKind;
  /** One Portuguese sentence: what happened, where, and what to do. */
  message: string;
  /** The system's own code (ENOSPC, SQLITE_FULL…), for the log beside the message. */
  code: string;
};

/** Where the fault happened, for the sentence: a path, or a port with the option that sets it. */
export type FaultPlace = { path?: string; port?: number; portOption?: string };

const KINDS: Record<string, FaultKind> = {
  ENOSPC: 'disco_cheio',
  EDQUOT: 'disco_cheio',
  SQLITE_FULL: 'disco_cheio',
  EROFS: 'somente_leitura',
  SQLITE_READONLY: 'somente_leitura',
  EACCES: 'sem_permissao',
  EPERM: 'sem_permissao',
  SQLITE_PERM: 'sem_permissao',
  SQLITE_AUTH: 'sem_permissao',
  EADDRINUSE: 'porta_em_uso',
  ENOENT: 'pasta_ausente',
  ENOTDIR: 'pasta_ausente',
  EIO: 'falha_disco',
  SQLITE_IOERR: 'falha_disco',
};

/** The error's code, walking `cause` (a wrapped error keeps the system's one inside). */
function codeOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
  }
  return undefined;
}

function pathOf(err: unknown): string | undefined {
  const path = (err as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' && path !== '' ? path : undefined;
}

function portOf(err: unknown): number | undefined {
  const port = (err as { port?: unknown } | undefined)?.port;
  return typeof port === 'number' ? port : undefined;
}

/** The kind of a code: SQLite's extended codes (SQLITE_IOERR_WRITE) by their primary code. */
function kindOf(code: string): FaultKind | undefined {
  if (KINDS[code]) return KINDS[code];
  const primary = /^(SQLITE_[A-Z]+?)(_[A-Z_]+)?$/.exec(code)?.[1];
  if (!primary) return undefined;
  // SQLITE_CANTOPEN says the file could not be opened, without why: a missing folder or a
  // forbidden one. Told as a missing place (what to check first).
  if (primary === 'SQLITE_CANTOPEN') return 'pasta_ausente';
  return KINDS[primary];
}

function sentence(kind: FaultKind, place: FaultPlace): string {
  const where = place.path ? ` (${place.path})` : '';
  switch (kind) {
    case 'disco_cheio':
      return `O disco está cheio${where}: libere espaço nesse disco (apague arquivos que não são do Balcão, esvazie a lixeira) e tente de novo. Nada do que já estava gravado se perdeu.`;
    case 'somente_leitura':
      return `A pasta de dados está somente para leitura${where}: o Balcão precisa gravar nela. Libere a gravação (disco protegido contra gravação, ou montado só para leitura) ou use outra pasta.`;
    case 'sem_permissao':
      return `Sem permissão para gravar na pasta de dados${where}: o usuário que roda o Balcão precisa poder ler e gravar nela. Ajuste as permissões da pasta ou use outra.`;
    case 'porta_em_uso':
      return `A porta${place.port === undefined ? '' : ` ${place.port}`} já está em uso por outro programa: feche esse programa ou escolha outra porta${place.portOption ? ` (${place.portOption})` : ''}.`;
    case 'pasta_ausente':
      return `A pasta não existe ou não pôde ser aberta${where}: se ela fica num disco externo ou de rede, conecte-o; senão crie a pasta ou aponte o Balcão para outra.`;
    case 'falha_disco':
      return `Erro de leitura ou gravação no disco${where}: o disco pode estar com defeito. Não desligue o computador à força; copie a pasta de dados para outro disco e chame o suporte.`;
  }
}

/**
 * The fault `err` is, in words, or undefined when it is not one of the machine's (a bug, a
 * refusal of ours). `place` names where it happened when the error does not (SQLite's errors
 * never carry the file).
 */
export function systemFault(err: unknown, place: FaultPlace = {}): SystemFault | undefined {
  const code = codeOf(err);
  if (!code) return undefined;
  const kind = kindOf(code);
  if (!kind) return undefined;
  const path = place.path ?? pathOf(err);
  const port = place.port ?? portOf(err);
  return { kind, code, message: sentence(kind, { ...place, path, port }) };
}

/** The sentence for `err` when it is a fault of the machine, else its own message (for a command's last words). */
export function faultWords(err: unknown, place: FaultPlace = {}): string {
  return systemFault(err, place)?.message ?? (err instanceof Error ? err.message : String(err));
}
