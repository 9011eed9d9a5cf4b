// A temporary file written now and read back once, for what an export learns as it goes but
// writes only at the end (the ZIP's central directory, the summary's lines): kept on disk, so a
// year's archive costs the same memory as a day's. The file is owner-only, in its own folder
// under the system's temporary folder, and removed by `dispose` (or by `read` once it is done).

import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';

/** Appends are gathered in memory up to this many bytes, then written in one call. */
const FLUSH_BYTES = 256 * 1024;

export class Spool {
  #dir: string | undefined;
  #file: FileHandle | undefined;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #size = 0;

  /** Bytes appended so far. */
  get size(): number {
    return this.#size;
  }

  async append(data: Buffer | string): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.length;
    this.#size += bytes.length;
    if (this.#pendingBytes >= FLUSH_BYTES) await this.flush();
  }

  /** What was appended, in chunks, in order. */
  async *chunks(): AsyncGenerator<Buffer> {
    if (!this.#file) {
      yield* this.#pending;
      return;
    }
    await this.flush();
    for await (const chunk of this.#file.createReadStream({ autoClose: false, start: 0, highWaterMark: 64 * 1024 })) yield chunk as Buffer;
  }

  /** What was appended, line by line (without the line break). */
  async *lines(): AsyncGenerator<string> {
    yield* createInterface({ input: Readable.from(this.chunks()), crlfDelay: Infinity });
  }

  async dispose(): Promise<void> {
    this.#pending = [];
    const [file, dir] = [this.#file, this.#dir];
    this.#file = this.#dir = undefined;
    await file?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }

  private async flush(): Promise<void> {
    if (!this.#pendingBytes) return;
    if (!this.#file) {
      this.#dir = await mkdtemp(join(tmpdir(), 'balcao-exportacao-'));
      this.#file = await open(join(this.#dir, 'spool'), 'w+', 0o600);
    }
    const data = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.#file.write(data);
  }
}
