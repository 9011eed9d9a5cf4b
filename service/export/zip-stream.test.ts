import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, describe, expect, it } from 'vitest';
import { readZip } from '../../test/helpers/zip.ts';
import { needsZip64, zipStream, type ZipSource } from './zip-stream.ts';

const dir = mkdtempSync(join(tmpdir(), 'balcao-zip-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Info-ZIP's own check of every entry's CRC and size (Debian's unzip). */
function unzipTest(bytes: Buffer): string {
  const file = join(dir, `t${Math.random()}.zip`);
  writeFileSync(file, bytes);
  return execFileSync('unzip', ['-tq', file], { encoding: 'utf8' });
}

const spools = () => readdirSync(tmpdir()).filter((n) => n.startsWith('balcao-exportacao-')).length;

describe('zipStream', () => {
  it('writes each entry in order, whole or in pieces, readable by yauzl and by unzip', async () => {
    const xml = '<?xml version="1.0"?><NFe>' + 'ação '.repeat(3000) + '</NFe>';
    async function* pieces() {
      for (let i = 0; i < 300; i++) yield `linha ${i};ção\r\n`;
    }
    const sources: ZipSource[] = [
      { name: 'a-nfce.xml', content: async () => xml },
      { name: 'b.bin', content: async () => Buffer.from([0, 1, 2, 255]) },
      { name: 'vazio.txt', content: async () => '' },
      { name: 'resumo.csv', content: async () => pieces() },
    ];
    const bytes = await buffer(zipStream(sources));
    const entries = await readZip(bytes);
    expect([...entries.keys()]).toEqual(['a-nfce.xml', 'b.bin', 'vazio.txt', 'resumo.csv']);
    expect(entries.get('a-nfce.xml')!.toString('utf8')).toBe(xml);
    expect([...entries.get('b.bin')!]).toEqual([0, 1, 2, 255]);
    expect(entries.get('vazio.txt')!.length).toBe(0);
    expect(entries.get('resumo.csv')!.toString('utf8').split('\r\n')[299]).toBe('linha 299;ção');
    expect(bytes.length).toBeLessThan(xml.length / 10); // deflated
    expect(unzipTest(bytes)).toMatch(/No errors detected/);
  });

  it('ends with ZIP64 records, readable by both, once a count, size or offset outgrows the classic fields', async () => {
    const sources = ['a', 'b', 'c'].map((n) => ({ name: `${n}.xml`, content: async () => `<${n}/>` }));
    const bytes = await buffer(zipStream(sources, { zip64: true }));
    expect(bytes.readUInt16LE(bytes.length - 22 + 10)).toBe(0xffff); // the classic record defers to ZIP64
    expect(bytes.readUInt32LE(bytes.length - 22 - 20)).toBe(0x07064b50); // ZIP64 locator
    expect([...(await readZip(bytes)).keys()]).toEqual(['a.xml', 'b.xml', 'c.xml']);
    expect(unzipTest(bytes)).toMatch(/No errors detected/);
    // When it is needed: a year's archive has more than 65,534 entries; a large one, offsets past 4 GiB.
    expect(needsZip64(65_534, 1e6, 1e5)).toBe(false);
    expect(needsZip64(65_535, 1e6, 1e5)).toBe(true);
    expect(needsZip64(10, 2 ** 32, 1e3)).toBe(true);
  });

  it('errors the stream when a content fails, and leaves no temporary file behind', async () => {
    const before = spools();
    function* failing() {
      for (let i = 0; i < 5000; i++) yield { name: `d${i}.xml`, content: async () => `<d>${i}</d>` };
      yield { name: 'quebrado.xml', content: async () => Promise.reject(new Error('XML sumiu')) };
      yield { name: 'depois.xml', content: async () => 'nunca' };
    }
    await expect(buffer(zipStream(failing()))).rejects.toThrow('XML sumiu');
    expect(spools()).toBe(before);
  });
});
