// A ZIP archive written while it is read, for the accountant's exports (docs/api.md,
// "Accountant's export"): yazl (a maintained ZIP writer) asks for each entry's content only when
// the archive reaches it, and pipes it with backpressure into the output, so a month of XML is
// never held in memory: at any moment, one document on its way out. An entry's content may
// depend on the ones before it (the summary, added last, is built from what was written).

import { Readable } from 'node:stream';
import yazl from 'yazl';

export type LazyEntry = {
  /** The path inside the archive. */
  name: string;
  /** Read when the archive reaches the entry; a rejection aborts the archive (the stream errors). */
  content: () => Promise<string | Buffer>;
};

/** The archive as a stream; the entries' contents are produced in order, one at a time. */
export function lazyZip(entries: Iterable<LazyEntry>, mtime: Date = new Date()): Readable {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as Readable;
  // A failed entry leaves the archive unfinishable: the reader must see an error, never a
  // ZIP that looks complete.
  zip.on('error', (err: Error) => output.destroy(err));
  for (const entry of entries) {
    zip.addReadStreamLazy(entry.name, { mtime, mode: 0o100644 }, (done) => {
      entry.content().then(
        (data) => done(null, Readable.from([typeof data === 'string' ? Buffer.from(data, 'utf8') : data])),
        (err: unknown) => done(err, undefined as unknown as NodeJS.ReadableStream),
      );
    });
  }
  zip.end();
  return output;
}
