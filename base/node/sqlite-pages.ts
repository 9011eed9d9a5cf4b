// A structural check of a SQLite file that costs one sequential read of it: every page the file
// holds is accounted for (a b-tree page reached from a table's or an index's root, an overflow
// page of a row too big for its page, a free page), and every b-tree page's header and cells are
// where the file format says they must be. Damage of the kind a disk or a copy does (garbage or
// zeros over some pages, a truncated file) shows as a page that is not what its parent says, a
// pointer out of the file, a page claimed twice or by nobody.
//
// Why not just SQLite's `PRAGMA quick_check`: it checks more (the order of keys, each cell's
// bytes) but parses every cell of every page in C, which on a year of a store's data (≈1 GB) costs
// seconds at every start on a shared machine; this costs about the time to read the file (npm run
// bench -- integrity). It never decides alone: a suspicion is confirmed by quick_check before
// anything is refused (sqlite-check.ts), so a file this scan misreads is never refused wrongly.
//
// The layout read here is SQLite's documented file format (https://www.sqlite.org/fileformat2.html):
// the 100-byte header, b-tree pages (flag 2, 5, 10, 13), overflow chains, the freelist. Files
// this does not cover (auto-vacuum's pointer-map pages, more than 2^24 pages) are left to
// quick_check: `scan` answers `unsupported`.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

export type ScanResult = { ok: true; pages: number } | { ok: false; problem: string } | { ok: 'unsupported'; reason: string };

const MAGIC = 'SQLite format 3\0';
const TABLE_INTERIOR = 5;
const TABLE_LEAF = 13;
const INDEX_INTERIOR = 2;
const INDEX_LEAF = 10;
/** Parsed as a b-tree page but not a valid one. */
const MALFORMED = 255;
/** Above this many pages an overflow page's first byte may be non-zero, like a b-tree flag. */
const MAX_PAGES = 1 << 24;
/** Pages read per step: 8 MiB at 4 KiB pages. */
const CHUNK_PAGES = 2048;

type Header = { pageSize: number; usable: number; pageCount: number; freelistTrunk: number; freelistCount: number };

function readHeader(head: Buffer, fileSize: number): Header | { problem: string } | { unsupported: string } {
  if (fileSize < 100 || head.toString('latin1', 0, 16) !== MAGIC) return { problem: 'o arquivo não começa com o cabeçalho de um banco SQLite' };
  const raw = head.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return { problem: `tamanho de página inválido no cabeçalho (${raw})` };
  const usable = pageSize - head[20]!;
  if (usable < 480) return { problem: 'espaço reservado por página inválido no cabeçalho' };
  if (head.readUInt32BE(52) !== 0) return { unsupported: 'banco com auto_vacuum (páginas de mapa de ponteiros)' };
  const inHeader = head.readUInt32BE(28);
  const valid = inHeader > 0 && head.readUInt32BE(24) === head.readUInt32BE(92);
  const pageCount = valid ? inHeader : Math.floor(fileSize / pageSize);
  if (pageCount > MAX_PAGES) return { unsupported: 'banco com mais de 16 milhões de páginas' };
  if (pageCount * pageSize > fileSize) {
    return { problem: `o arquivo está truncado: o cabeçalho diz ${pageCount} páginas, o arquivo tem ${Math.floor(fileSize / pageSize)}` };
  }
  return { pageSize, usable, pageCount, freelistTrunk: head.readUInt32BE(32), freelistCount: head.readUInt32BE(36) };
}

/** A varint at `at` (1–9 bytes): [value, bytes read], or undefined when it runs past `end`. */
function varint(b: Buffer, at: number, end: number): [number, number] | undefined {
  let v = 0;
  for (let i = 0; i < 9; i++) {
    if (at + i >= end) return undefined;
    const byte = b[at + i]!;
    if (i === 8) return [v * 256 + byte, 9];
    v = v * 128 + (byte & 0x7f);
    if (byte < 0x80) return [v, i + 1];
  }
  return undefined;
}

/**
 * The pages of one file, fed in order, then checked as a whole. Per page it keeps only what the
 * second step needs: the b-tree flag (or MALFORMED), the first four bytes (an overflow or
 * freelist page's next pointer) and the references a b-tree page makes.
 */
class PageScan {
  private readonly kind: Uint8Array;
  private readonly next: Uint32Array;
  /** References of page p: refs[refStart[p] .. refStart[p+1]), as (target, overflow pages; 0 = a child) pairs. */
  private readonly refStart: Uint32Array;
  private refs = new Uint32Array(1 << 16);
  private refCount = 0;
  private fed = 0;
  private readonly lockBytePage: number;

  constructor(private readonly h: Header) {
    this.kind = new Uint8Array(h.pageCount + 1);
    this.next = new Uint32Array(h.pageCount + 1);
    this.refStart = new Uint32Array(h.pageCount + 2);
    this.lockBytePage = Math.floor(1073741824 / h.pageSize) + 1;
  }

  private ref(target: number, overflowPages: number): boolean {
    if (target < 1 || target > this.h.pageCount || target === this.lockBytePage) return false;
    if (this.refCount + 2 > this.refs.length) {
      const bigger = new Uint32Array(this.refs.length * 2);
      bigger.set(this.refs);
      this.refs = bigger;
    }
    this.refs[this.refCount++] = target;
    this.refs[this.refCount++] = overflowPages;
    return true;
  }

  /** Pages `first`, `first`+1… in `buf` (whole pages). */
  feed(buf: Buffer, first: number, count: number): void {
    for (let i = 0; i < count; i++) {
      const p = first + i;
      this.refStart[p] = this.refCount;
      const at = i * this.h.pageSize;
      this.next[p] = buf.readUInt32BE(at);
      const flagAt = at + (p === 1 ? 100 : 0);
      const flag = buf[flagAt]!;
      if (flag === TABLE_INTERIOR || flag === TABLE_LEAF || flag === INDEX_INTERIOR || flag === INDEX_LEAF) {
        const start = this.refCount;
        if (this.btreePage(buf, at, flagAt, flag)) this.kind[p] = flag;
        else {
          this.kind[p] = MALFORMED;
          this.refCount = start;
        }
      }
      this.fed = p;
    }
    this.refStart[this.fed + 1] = this.refCount;
  }

  /** Whether the b-tree page at `at` (header at `flagAt`) is well formed; records its references. */
  private btreePage(b: Buffer, at: number, flagAt: number, flag: number): boolean {
    const U = this.h.usable;
    const end = at + U;
    const interior = flag === TABLE_INTERIOR || flag === INDEX_INTERIOR;
    const ptrStart = flagAt + (interior ? 12 : 8);
    const cells = b.readUInt16BE(flagAt + 3);
    const ptrEnd = ptrStart + 2 * cells;
    const content = b.readUInt16BE(flagAt + 5) || 65536;
    const freeblock = b.readUInt16BE(flagAt + 1);
    if (ptrEnd > end || content > U || (cells > 0 && at + content < ptrEnd) || b[flagAt + 7]! > 60) return false;
    if (freeblock !== 0 && (at + freeblock < ptrEnd || freeblock > U - 4)) return false;
    if (interior && !this.ref(b.readUInt32BE(flagAt + 8), 0)) return false;
    const table = flag === TABLE_INTERIOR || flag === TABLE_LEAF;
    const maxLocal = table ? U - 35 : Math.floor(((U - 12) * 64) / 255) - 23;
    const minLocal = Math.floor(((U - 12) * 32) / 255) - 23;
    for (let c = 0; c < cells; c++) {
      const off = b.readUInt16BE(ptrStart + 2 * c);
      if (off < content || off > U - 4) return false;
      let pos = at + off;
      if (interior) {
        if (!this.ref(b.readUInt32BE(pos), 0)) return false;
        pos += 4;
      }
      if (flag === TABLE_INTERIOR) {
        if (!varint(b, pos, end)) return false;
        continue;
      }
      const size = varint(b, pos, end);
      if (!size) return false;
      pos += size[1];
      if (flag === TABLE_LEAF) {
        const rowid = varint(b, pos, end);
        if (!rowid) return false;
        pos += rowid[1];
      }
      const P = size[0];
      if (P <= maxLocal) {
        if (pos + P > end) return false;
        continue;
      }
      const K = minLocal + ((P - minLocal) % (U - 4));
      const local = K <= maxLocal ? K : minLocal;
      if (pos + local + 4 > end) return false;
      if (!this.ref(b.readUInt32BE(pos + local), Math.ceil((P - local) / (U - 4)))) return false;
    }
    return true;
  }

  /**
   * Walks every b-tree from its root, every overflow chain and the freelist: each page must be
   * used once, as what it is. `trunkPage` gives a freelist trunk page, read beforehand.
   */
  finish(roots: readonly number[], trunkPage: (page: number) => Buffer): string | undefined {
    const { pageCount, usable } = this.h;
    if (this.fed !== pageCount) return `o arquivo terminou na página ${this.fed} de ${pageCount}`;
    const used = new Uint8Array(pageCount + 1);
    const use = (p: number, what: string): string | undefined => {
      if (p < 1 || p > pageCount || p === this.lockBytePage) return `${what}: página ${p} fora do arquivo`;
      if (used[p]) return `a página ${p} é usada duas vezes (${what})`;
      used[p] = 1;
      return undefined;
    };
    const stack: number[] = [];
    for (const root of [1, ...roots]) {
      if (used[root]) continue;
      const rootKind = this.kind[root]!;
      if (rootKind === 0 || rootKind === MALFORMED) return `a página ${root}, raiz de uma tabela ou índice, está danificada`;
      const table = rootKind === TABLE_INTERIOR || rootKind === TABLE_LEAF;
      stack.push(root);
      while (stack.length) {
        const p = stack.pop()!;
        const k = this.kind[p]!;
        const ok = table ? k === TABLE_INTERIOR || k === TABLE_LEAF : k === INDEX_INTERIOR || k === INDEX_LEAF;
        if (!ok) return `a página ${p} devia ser de ${table ? 'uma tabela' : 'um índice'} e está danificada`;
        const problem = use(p, `árvore da raiz ${root}`);
        if (problem) return problem;
        for (let r = this.refStart[p]!; r < this.refStart[p + 1]!; r += 2) {
          const target = this.refs[r]!;
          const overflow = this.refs[r + 1]!;
          if (overflow === 0) {
            stack.push(target);
            continue;
          }
          // An overflow chain: `overflow` pages, each naming the next, the last naming none.
          let page = target;
          for (let n = 1; ; n++) {
            const chainProblem = use(page, `continuação de um registro da página ${p}`);
            if (chainProblem) return chainProblem;
            const nextPage = this.next[page]!;
            if (n === overflow) {
              if (nextPage !== 0) return `a continuação de um registro da página ${p} é mais longa do que devia`;
              break;
            }
            if (nextPage === 0) return `a continuação de um registro da página ${p} termina antes do fim`;
            page = nextPage;
          }
        }
      }
    }
    let free = 0;
    for (let trunk = this.h.freelistTrunk; trunk !== 0;) {
      const problem = use(trunk, 'lista de páginas livres');
      if (problem) return problem;
      const page = trunkPage(trunk);
      const leaves = page.readUInt32BE(4);
      if (leaves > usable / 4 - 2) return `a página ${trunk} da lista de páginas livres está danificada`;
      for (let i = 0; i < leaves; i++) {
        const leafProblem = use(page.readUInt32BE(8 + 4 * i), 'lista de páginas livres');
        if (leafProblem) return leafProblem;
      }
      free += 1 + leaves;
      trunk = page.readUInt32BE(0);
    }
    if (free !== this.h.freelistCount) return `a lista de páginas livres tem ${free} páginas, o cabeçalho diz ${this.h.freelistCount}`;
    for (let p = 1; p <= pageCount; p++) {
      if (!used[p] && p !== this.lockBytePage) return `a página ${p} não pertence a nada (deveria ser de uma tabela, de um registro ou livre)`;
    }
    return undefined;
  }
}

/** What is wrong with `file`'s header (not SQLite's, a page size that cannot be, truncated), if anything. */
export function headerProblem(file: string): string | undefined {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return undefined;
    const head = Buffer.alloc(100);
    readSync(fd, head, 0, 100, 0);
    const h = readHeader(head, size);
    return 'problem' in h ? h.problem : undefined;
  } finally {
    closeSync(fd);
  }
}

/** A read the scan needs: `length` bytes of the file at `position`, into `buffer`. */
type Read = { buffer: Buffer; length: number; position: number };

/**
 * The scan of a file of `size` bytes, as the reads it needs in order (the header, the freelist's
 * trunk pages, then every page in chunks): the same steps whether the file is read synchronously
 * or a chunk per turn of the event loop.
 */
function* scanning(size: number, roots: readonly number[]): Generator<Read, ScanResult, void> {
  if (size === 0) return { ok: true, pages: 0 };
  const head = Buffer.alloc(100);
  yield { buffer: head, length: 100, position: 0 };
  const h = readHeader(head, size);
  if ('problem' in h) return { ok: false, problem: h.problem };
  if ('unsupported' in h) return { ok: 'unsupported', reason: h.unsupported };
  const trunks = new Map<number, Buffer>();
  for (let trunk = h.freelistTrunk; trunk >= 1 && trunk <= h.pageCount && !trunks.has(trunk);) {
    const page = Buffer.alloc(h.pageSize);
    yield { buffer: page, length: h.pageSize, position: (trunk - 1) * h.pageSize };
    trunks.set(trunk, page);
    trunk = page.readUInt32BE(0);
  }
  const scan = new PageScan(h);
  const buf = Buffer.allocUnsafe(CHUNK_PAGES * h.pageSize);
  for (let first = 1; first <= h.pageCount; first += CHUNK_PAGES) {
    const count = Math.min(CHUNK_PAGES, h.pageCount - first + 1);
    yield { buffer: buf, length: count * h.pageSize, position: (first - 1) * h.pageSize };
    scan.feed(buf, first, count);
  }
  // A trunk the chain did not reach (out of the file, or a loop) is read as empty: the walk then says where.
  const problem = scan.finish(roots, (page) => trunks.get(page) ?? Buffer.alloc(h.pageSize));
  return problem ? { ok: false, problem } : { ok: true, pages: h.pageCount };
}

/**
 * Scans `file` (a database with nothing in its WAL: checkpointed, or a copy), whose table and
 * index roots are `roots` (sqlite_schema's rootpage values). Synchronous: at start, before anything runs.
 */
export function scanDatabaseFile(file: string, roots: readonly number[]): ScanResult {
  const fd = openSync(file, 'r');
  try {
    const steps = scanning(fstatSync(fd).size, roots);
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done) return step.value;
      readSync(fd, step.value.buffer, 0, step.value.length, step.value.position);
    }
  } finally {
    closeSync(fd);
  }
}

/** scanDatabaseFile, reading a chunk per turn of the event loop: for a process that serves meanwhile. */
export async function scanDatabaseFileAsync(file: string, roots: readonly number[]): Promise<ScanResult> {
  const handle = await open(file, 'r');
  try {
    const steps = scanning((await handle.stat()).size, roots);
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done) return step.value;
      await handle.read(step.value.buffer, 0, step.value.length, step.value.position);
    }
  } finally {
    await handle.close();
  }
}
