// A ZIP archive written while it is read, for the accountant's exports (docs/api.md,
// "Accountant's export"), in memory that does not grow with the archive: one entry's content at
// a time is asked for, deflated and handed to the reader only as fast as it reads (Readable.from
// pulls the next piece when the reader wants it); what the format wants at the end (the central
// directory: one record per entry) is spooled to a temporary file and copied out last.
//
// Why not a library: yazl, used before, keeps one object per entry and scans them all from the
// first each time an entry ends (quadratic: a year of 400,000 entries took minutes and over a
// gigabyte); archiver/zip-stream keep one object per entry too; fflate writes no ZIP64, which
// an archive of more than 65,535 entries needs. The layout here is PKWARE's APPNOTE 6.3:
// a local header with a data descriptor after the data (bit 3, sizes unknown when the header is
// written), UTF-8 names (bit 11), deflate, and ZIP64 end records when the entries, the central
// directory's size or an offset do not fit the classic fields. Read back by yauzl and Info-ZIP's
// unzip in service/export/zip-stream.test.ts.

import { Readable } from 'node:stream';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';
import { Spool } from './spool.ts';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** Our stored XML has no declaration; the accountant's tools expect one in each file. */
export const withDeclaration = (xml: string): string => (xml.startsWith('<?xml') ? xml : DECLARATION + xml);

export type ZipSource = {
  /** The path inside the archive. */
  name: string;
  /** Read when the archive reaches the entry; a rejection aborts the archive (the stream errors). */
  content: () => Promise<string | Buffer | AsyncIterable<string | Buffer>>;
};

const MAX16 = 0xffff;
const MAX32 = 0xffffffff;
/** Version 4.5: ZIP64. Made by: 3 (Unix, so the mode in the external attributes is read). */
const VERSION = 45;
const MADE_BY = (3 << 8) | VERSION;
/** Bit 3: sizes and CRC in the data descriptor; bit 11: the name is UTF-8. */
const FLAGS = 0x0808;
const DEFLATE = 8;
const FILE_MODE = 0o100644;

/** MS-DOS date and time fields (local wall clock, 2-second resolution), as ZIP keeps them. */
function dosDateTime(d: Date): { date: number; time: number } {
  const year = Math.max(1980, d.getFullYear());
  return {
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
  };
}

function localHeader(name: Buffer, when: { date: number; time: number }): Buffer {
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(VERSION, 4);
  h.writeUInt16LE(FLAGS, 6);
  h.writeUInt16LE(DEFLATE, 8);
  h.writeUInt16LE(when.time, 10);
  h.writeUInt16LE(when.date, 12);
  // CRC and sizes (14..25) stay 0: they follow the data, in the descriptor.
  h.writeUInt16LE(name.length, 26);
  h.writeUInt16LE(0, 28);
  return Buffer.concat([h, name]);
}

function dataDescriptor({ crc, compressed, size }: Facts): Buffer {
  const d = Buffer.alloc(16);
  d.writeUInt32LE(0x08074b50, 0);
  d.writeUInt32LE(crc, 4);
  d.writeUInt32LE(compressed, 8);
  d.writeUInt32LE(size, 12);
  return d;
}

function centralRecord(name: Buffer, when: { date: number; time: number }, { crc, compressed, size }: Facts, offset: number): Buffer {
  // Only the offset can outgrow 32 bits (one document is never 4 GiB): then it goes in a ZIP64 extra field.
  const zip64 = offset >= MAX32;
  const h = Buffer.alloc(46 + (zip64 ? 12 : 0));
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE(MADE_BY, 4);
  h.writeUInt16LE(VERSION, 6);
  h.writeUInt16LE(FLAGS, 8);
  h.writeUInt16LE(DEFLATE, 10);
  h.writeUInt16LE(when.time, 12);
  h.writeUInt16LE(when.date, 14);
  h.writeUInt32LE(crc, 16);
  h.writeUInt32LE(compressed, 20);
  h.writeUInt32LE(size, 24);
  h.writeUInt16LE(name.length, 28);
  h.writeUInt16LE(zip64 ? 12 : 0, 30);
  // Comment length, disk, internal attributes: 0.
  h.writeUInt32LE((FILE_MODE << 16) >>> 0, 38);
  h.writeUInt32LE(zip64 ? MAX32 : offset, 42);
  if (zip64) {
    h.writeUInt16LE(0x0001, 46);
    h.writeUInt16LE(8, 48);
    h.writeBigUInt64LE(BigInt(offset), 50);
  }
  return Buffer.concat([h.subarray(0, 46), name, h.subarray(46)]);
}

export type ZipOptions = {
  /** The entries' modification time (default: now). */
  mtime?: Date;
  /** ZIP64 end records even when the classic ones would do (they are written whenever needed). */
  zip64?: boolean;
};

/** Whether the end of the archive needs ZIP64 records: a count, a size or an offset beyond the classic fields. */
export const needsZip64 = (entries: number, cdOffset: number, cdSize: number): boolean => entries >= MAX16 || cdOffset >= MAX32 || cdSize >= MAX32;

function endRecords(entries: number, cdOffset: number, cdSize: number, zip64: boolean): Buffer {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(zip64 ? MAX16 : entries, 8);
  end.writeUInt16LE(zip64 ? MAX16 : entries, 10);
  end.writeUInt32LE(zip64 ? MAX32 : cdSize, 12);
  end.writeUInt32LE(zip64 ? MAX32 : cdOffset, 16);
  if (!zip64) return end;
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(MADE_BY, 12);
  record.writeUInt16LE(VERSION, 14);
  // This disk and the central directory's: 0.
  record.writeBigUInt64LE(BigInt(entries), 24);
  record.writeBigUInt64LE(BigInt(entries), 32);
  record.writeBigUInt64LE(BigInt(cdSize), 40);
  record.writeBigUInt64LE(BigInt(cdOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(cdOffset + cdSize), 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([record, locator, end]);
}

async function* piecesOf(content: AsyncIterable<string | Buffer>): AsyncGenerator<Buffer> {
  for await (const piece of content) yield typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
}

type Facts = { crc: number; compressed: number; size: number };

function checked(facts: Facts): Facts {
  if (facts.size >= MAX32 || facts.compressed >= MAX32) throw new Error('entrada grande demais para o arquivo ZIP (4 GiB)');
  return facts;
}

/** Content that comes in pieces (a summary read back from its file), deflated as it comes. */
async function* deflatedStream(content: AsyncIterable<Buffer>, done: (facts: Facts) => void): AsyncGenerator<Buffer> {
  const deflate = createDeflateRaw({ level: 6 });
  let crc = 0;
  let size = 0;
  let compressed = 0;
  const feed = (async () => {
    try {
      for await (const piece of content) {
        crc = crc32(piece, crc);
        size += piece.length;
        if (!deflate.write(piece)) await new Promise((resolve) => deflate.once('drain', resolve));
      }
      deflate.end();
    } catch (err) {
      deflate.destroy(err as Error);
    }
  })();
  for await (const out of deflate) {
    compressed += (out as Buffer).length;
    yield out as Buffer;
  }
  await feed;
  done(checked({ crc, compressed, size }));
}

async function* zipPieces(sources: AsyncIterable<ZipSource> | Iterable<ZipSource>, options: ZipOptions): AsyncGenerator<Buffer> {
  const when = dosDateTime(options.mtime ?? new Date());
  const directory = new Spool();
  let offset = 0;
  let entries = 0;
  try {
    for await (const source of sources) {
      const name = Buffer.from(source.name, 'utf8');
      if (name.length > MAX16) throw new Error(`nome de entrada grande demais: ${source.name.slice(0, 80)}…`);
      const start = offset;
      const header = localHeader(name, when);
      const content = await source.content();
      let facts: Facts;
      if (typeof content === 'string' || Buffer.isBuffer(content)) {
        // A document, a few kilobytes whole in hand: deflated in one call, the entry handed out
        // in one piece (a stream per entry would cost more than the work).
        const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
        const deflated = deflateRawSync(data, { level: 6 });
        facts = checked({ crc: crc32(data), compressed: deflated.length, size: data.length });
        const entry = Buffer.concat([header, deflated, dataDescriptor(facts)]);
        offset += entry.length;
        yield entry;
      } else {
        offset += header.length;
        yield header;
        let streamed: Facts | undefined;
        for await (const piece of deflatedStream(piecesOf(content), (f) => (streamed = f))) {
          offset += piece.length;
          yield piece;
        }
        facts = streamed!;
        const descriptor = dataDescriptor(facts);
        offset += descriptor.length;
        yield descriptor;
      }
      await directory.append(centralRecord(name, when, facts, start));
      entries++;
    }
    const cdOffset = offset;
    for await (const chunk of directory.chunks()) yield chunk;
    yield endRecords(entries, cdOffset, directory.size, options.zip64 === true || needsZip64(entries, cdOffset, directory.size));
  } finally {
    await directory.dispose();
  }
}

/**
 * The archive of `sources`, in their order, as a stream. An entry's content may depend on the
 * ones before it (a summary added last is built from what was written). Should a content fail,
 * the stream errors: a reader never sees an archive that looks complete.
 */
export function zipStream(sources: AsyncIterable<ZipSource> | Iterable<ZipSource>, options: ZipOptions = {}): Readable {
  return Readable.from(zipPieces(sources, options), { objectMode: false, highWaterMark: 64 * 1024 });
}
