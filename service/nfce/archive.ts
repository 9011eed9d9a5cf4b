// The NFC-e archive of a month (`balcao arquivar`, service/archive-command.ts): the accountant's
// export of the month (export.ts) written to a ZIP beside the database, read back whole (every
// entry's bytes against its CRC-32 and size, each NFC-e holding its own access key), and only then
// the month's documents that are in it deleted from the database with their idempotency keys.
//
// The law's five years: an NFC-e is kept until the tax on it can no longer be assessed, five years
// counted from the first day of the year after its issue (CTN art. 173, I). So a month of 2021 may
// leave the database from 2027-01-01 (Brasília) on; anything younger is refused before anything is
// written.
//
// Crash-safe and idempotent: the ZIP is written to `<name>.parcial`, fsynced, verified and only
// then renamed to its name; documents are deleted a page at a time, each page in one transaction,
// and only those whose access key the verified archive holds. Killed at any point, a run again
// finds either no archive (and writes it again from the documents, all still there) or the
// archive (verifies it and deletes what is left). A document of the month not in an existing
// archive stays, and is reported. A document an NF-e de devolução refers to stays too.

import { closeSync, createWriteStream, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import { brasiliaDayRange, brasiliaPeriod } from '../../base/common/brasilia.ts';
import { EXPORT_PAGE_ROWS, type Keyset } from '../export/pages.ts';
import type { ExportPeriod } from '../export/period.ts';
import type { DevolucaoExportSource } from '../export/devolucoes.ts';
import { nfceExport, nfceExportFileName } from './export.ts';
import type { NfceStore } from './store.ts';

/** Refused or impossible as asked: the message (Portuguese) says why and what to do. */
export class ArchiveError extends Error {}

export type ArchiveOutcome = {
  file: string;
  /** False when the archive was already there (an earlier run): verified, not written again. */
  written: boolean;
  /** Entries read back from the archive, and of them the NFC-e. */
  entries: number;
  nfceEntries: number;
  deleted: number;
  /** Documents of the month kept: referred to by an NF-e de devolução, or not in the archive. */
  keptForReturns: number;
  notInArchive: number;
};

/** The month `AAAA-MM` as an export period (Brasília days, both ends included). */
export function monthPeriod(month: string): ExportPeriod {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!m) throw new ArchiveError(`--mes: informe o mês como AAAA-MM (ex.: 2021-03), não "${month}"`);
  const [year, mm] = [Number(m[1]), Number(m[2])];
  const last = new Date(Date.UTC(year, mm, 0)).getUTCDate();
  const de = `${month}-01`;
  const ate = `${month}-${String(last).padStart(2, '0')}`;
  return { de, ate, ...brasiliaPeriod(de, ate)! };
}

/** When the documents of the period's year may leave the database: 1 January, five years after the year that follows it. */
export function deletableFrom(period: ExportPeriod): Date {
  return brasiliaDayRange(`${Number(period.de.slice(0, 4)) + 6}-01-01`)!.start;
}

export type ArchiveTarget = { store: NfceStore; returns: DevolucaoExportSource; company: { id: string; cnpj: string } };

export async function archiveNfceMonth(target: ArchiveTarget, month: string, dir: string, now: Date): Promise<ArchiveOutcome> {
  const period = monthPeriod(month);
  const from = deletableFrom(period);
  if (now < from) {
    throw new ArchiveError(
      `As NFC-e de ${month} ainda estão no prazo legal de guarda (cinco anos contados de 1º de janeiro do ano seguinte à emissão): ` +
        `podem sair do banco a partir de ${from.toISOString().slice(0, 10)}. Nada foi gravado nem removido.`,
    );
  }
  if (!existsSync(dir)) throw new ArchiveError(`--pasta: ${dir} não existe; crie a pasta do arquivo antes`);
  const file = join(dir, nfceExportFileName(target.company.cnpj, period));
  const written = !existsSync(file);
  if (written) await writeVerified(target, period, file);
  const archive = await readArchive(file);

  let deleted = 0;
  let keptForReturns = 0;
  let notInArchive = 0;
  let after: Keyset | null = null;
  for (;;) {
    const page = await target.store.exportPage(target.company.id, period.start, period.end, after, EXPORT_PAGE_ROWS);
    const archived = page.rows.filter((d) => archive.chaves.has(d.chave));
    notInArchive += page.rows.length - archived.length;
    if (archived.length) {
      const gone = await target.store.deleteArchived(
        target.company.id,
        archived.map((d) => d.id),
      );
      deleted += gone;
      keptForReturns += archived.length - gone;
    }
    if (!page.next) break;
    after = page.next;
  }
  return { file, written, entries: archive.entries, nfceEntries: archive.chaves.size, deleted, keptForReturns, notInArchive };
}

/** The month's export to `<file>.parcial`, on disk, read back, then renamed to `file`. */
async function writeVerified(target: ArchiveTarget, period: ExportPeriod, file: string): Promise<void> {
  const partial = `${file}.parcial`;
  try {
    await pipeline(nfceExport(target.store, target.returns, target.company.id, period), createWriteStream(partial, { mode: 0o600 }));
    syncPath(partial, 'r+');
    await readArchive(partial);
    renameSync(partial, file);
    syncPath(dirname(file), 'r');
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
}

function syncPath(path: string, flags: 'r' | 'r+'): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const NFCE_ENTRY = /^(\d{44})-nfce\.xml$/;

/**
 * Reads every entry of the archive (yauzl, a reader independent of our writer): its bytes against
 * its CRC-32 and size; an NFC-e must hold its own access key. The NFC-e keys and the entry count.
 */
function readArchive(file: string): Promise<{ entries: number; chaves: Set<string> }> {
  const bad = (why: string) => new ArchiveError(`O arquivo ${basename(file)} não confere (${why}): mova-o para outro lugar e rode de novo.`);
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(bad(err?.message ?? 'ZIP ilegível'));
      let entries = 0;
      let summary = false;
      const chaves = new Set<string>();
      const fail = (e: Error) => {
        zip.close();
        reject(e instanceof ArchiveError ? e : bad(e.message));
      };
      zip.on('error', fail);
      zip.on('end', () => (summary ? resolve({ entries, chaves }) : reject(bad('falta resumo.csv'))));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return fail(e ?? new Error(entry.fileName));
          let crc = 0;
          const nfce = NFCE_ENTRY.exec(entry.fileName);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => {
            crc = crc32(c, crc);
            if (nfce) chunks.push(c);
          });
          stream.on('error', fail);
          stream.on('end', () => {
            if (crc !== entry.crc32) return fail(bad(`CRC de ${entry.fileName}`));
            if (nfce) {
              if (!Buffer.concat(chunks).includes(`NFe${nfce[1]}`)) return fail(bad(`${entry.fileName} não é a NFC-e ${nfce[1]}`));
              chaves.add(nfce[1]!);
            }
            if (entry.fileName === 'resumo.csv') summary = true;
            entries++;
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
