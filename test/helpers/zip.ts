// Reads a ZIP archive (a response body) into its entries with yauzl, a reader independent of the
// exports' writer (service/export/zip-stream.ts): every entry's name and bytes, in archive order.

import yauzl from 'yauzl';

export type ZipEntries = Map<string, Buffer>;

export function readZip(bytes: Buffer): Promise<ZipEntries> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('ZIP ilegível'));
      const out: ZipEntries = new Map();
      zip.on('error', reject);
      zip.on('end', () => resolve(out));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (out.has(entry.fileName)) return reject(new Error(`entrada repetida no ZIP: ${entry.fileName}`));
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error(entry.fileName));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
