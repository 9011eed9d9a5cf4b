// Fiscal core: build + sign throughput for 1,000 NFC-e of 10 items and 1,000 MDF-e, on one core
// (this process), with XSD validation measured separately. The NFC-e twice: of a Simples Nacional
// store (no tax reform groups) and of a regime-normal store (CRT 3: IBSCBS on every item, with a
// mix of full-rate and reduced classifications, vItem, IBSCBSTot, vNFTot), side by side.
//
// Each NFC-e costs one RSA-2048 signature, so the raw signing rate of this machine is the ceiling
// of build+sign. It is measured in the same run, in rounds interleaved with the NFC-e (a block of
// signatures, a block of each NFC-e, and again), so that a busy neighbour on these shared cores
// weighs on both alike; the ratio says how much of that ceiling the rest of the work leaves.
// "Per core" rates count the CPU time the process spent (process.cpuUsage: user + system, all its
// threads, so the collector's and the compiler's background work too, which one core would have
// to do as well), not the wall clock, which on a shared machine also counts the time another
// process held the core. The wall-clock rate of the main thread is printed beside it, and the
// medians are of wall-clock durations.

import { createPrivateKey, sign as rsaSign } from 'node:crypto';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { issueMdfe } from '../fiscal/mdfe/build.ts';
import { buildNfce, issueNfce } from '../fiscal/nfce/build.ts';
import type { NfceRequest } from '../fiscal/nfce/types.ts';
import { demoEmitter, sampleMdfeRequest, sampleNfceRequest } from '../fiscal/samples.ts';
import { precompileSchemas, validateXml } from '../fiscal/schema.ts';
import { percentile, timeEach, type BenchFigure, type BenchSuite } from './types.ts';

const N = 1000;
const ROUNDS = 10;
const PER_ROUND = N / ROUNDS;
const WARM_UP = 500;

type Spent = { cpu: number; wall: number };

/** CPU and wall-clock milliseconds of `n` calls of `fn`, added to `spent`; each call's wall-clock duration appended to `each`. */
async function block(n: number, offset: number, spent: Spent, each: number[], fn: (i: number) => unknown): Promise<void> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  each.push(...(await timeEach(n, (i) => fn(offset + i))));
  spent.wall += performance.now() - t0;
  const c = process.cpuUsage(c0);
  spent.cpu += (c.user + c.system) / 1000;
}

/** Per second of `spent`. */
const rate = (n: number, ms: number): number => (n * 1000) / ms;

export const suite: BenchSuite = {
  name: 'fiscal',
  async run(): Promise<BenchFigure[]> {
    const credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'BENCH' }).certificate;
    const emitter = demoEmitter();
    const dhEmi = new Date();
    precompileSchemas(['nfe', 'mdfe']);

    // The raw signature: RSA-SHA1 (PKCS#1 v1.5) with the same 2048-bit key over a buffer the size
    // of a canonical SignedInfo, which is what fiscal/signature.ts signs once per document.
    const key = createPrivateKey(credentials.privateKeyPem);
    const signedInfoSized = Buffer.alloc(880, 'a');
    const rsa = (): Buffer => rsaSign('RSA-SHA1', signedInfoSized, key);

    const nfceRequests = Array.from({ length: N }, (_, i) => sampleNfceRequest({ nNF: i + 1, items: 10 }));
    // The same carts for a CRT 3 store: exempt ICMS (CST 40) and, on every third item, the cesta
    // básica classification (CST 200, reduced rate with gRed); the others take the default.
    const crt3 = demoEmitter({ crt: 3 });
    const reformRequests: NfceRequest[] = nfceRequests.map((r) => ({
      ...r,
      det: r.det.map((d, i) => ({
        ...d,
        imposto: { ICMS: { ICMS40: { orig: '0', CST: '40' } }, ...(i % 3 === 2 && { IBSCBS: { CST: '200', cClassTrib: '200003' } }) },
      })),
    }));
    const issueSimples = (i: number) => issueNfce(nfceRequests[i]!, { emitter, dhEmi, tpEmis: 1, credentials }).xml;
    const issueReform = (i: number) => issueNfce(reformRequests[i]!, { emitter: crt3, dhEmi, tpEmis: 1, credentials }).xml;

    // Warm-up: JIT and lazily loaded tables must not count. The service issues for days; 50
    // documents left V8 still compiling the builders in the background during the measured
    // rounds (~0.1 ms of CPU per document, counted as if it were the builders' own), 500 do not.
    for (let i = 0; i < WARM_UP; i++) {
      rsa();
      issueSimples(i);
      issueReform(i);
    }
    const nfceXml: string[] = [];
    const reformXml: string[] = [];
    const rsaTimes: number[] = [];
    const nfceTimes: number[] = [];
    const reformTimes: number[] = [];
    const rsaSpent: Spent = { cpu: 0, wall: 0 };
    const nfceSpent: Spent = { cpu: 0, wall: 0 };
    const reformSpent: Spent = { cpu: 0, wall: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      const at = r * PER_ROUND;
      await block(PER_ROUND, at, rsaSpent, rsaTimes, rsa);
      await block(PER_ROUND, at, nfceSpent, nfceTimes, (i) => nfceXml.push(issueSimples(i)));
      await block(PER_ROUND, at, reformSpent, reformTimes, (i) => reformXml.push(issueReform(i)));
    }
    for (const times of [rsaTimes, nfceTimes, reformTimes]) times.sort((a, b) => a - b);
    if (!reformXml[0]!.includes('<IBSCBSTot>')) throw new Error('a NFC-e do regime normal saiu sem os grupos da reforma');
    const rsaPerSecond = rate(N, rsaSpent.cpu);
    const nfcePerSecond = rate(N, nfceSpent.cpu);
    const reformPerSecond = rate(N, reformSpent.cpu);

    // Building alone (checks and writing, no signature, no QR Code).
    const buildTimes = await timeEach(N, (i) => buildNfce(nfceRequests[i]!, { emitter, dhEmi, tpEmis: 1 }));
    const nfceValidate = await timeEach(N, (i) => validateXml(nfceXml[i]!, 'nfe'));
    const reformValidate = await timeEach(N, (i) => validateXml(reformXml[i]!, 'nfe'));

    const mdfeEmitter = demoEmitter({ crt: 3 });
    const mdfeRequests = Array.from({ length: N }, (_, i) => sampleMdfeRequest({ nMDF: i + 1 }));
    const mdfeXml: string[] = [];
    for (let i = 0; i < WARM_UP; i++) issueMdfe(mdfeRequests[i]!, { emitter: mdfeEmitter, dhEmi, credentials });
    const t1 = performance.now();
    const mdfeTimes = await timeEach(N, (i) => mdfeXml.push(issueMdfe(mdfeRequests[i]!, { emitter: mdfeEmitter, dhEmi, credentials }).xml));
    const mdfeSeconds = (performance.now() - t1) / 1000;
    const mdfeValidate = await timeEach(N, (i) => validateXml(mdfeXml[i]!, 'mdfe'));

    return [
      { name: 'RSA-2048 raw signing rate per core (the limit)', value: rsaPerSecond, unit: 'signs/s' },
      { name: 'RSA-2048 raw signing rate, wall clock', value: rate(N, rsaSpent.wall), unit: 'signs/s' },
      { name: 'RSA-2048 raw signature median', value: percentile(rsaTimes, 50), unit: 'ms' },
      { name: 'NFC-e 10 items build+sign per core', value: nfcePerSecond, unit: 'docs/s', target: { kind: 'min', value: 1000 } },
      { name: 'NFC-e 10 items build+sign / RSA limit', value: nfcePerSecond / rsaPerSecond, unit: 'ratio', target: { kind: 'min', value: 0.75 } },
      { name: 'NFC-e 10 items build+sign, wall clock', value: rate(N, nfceSpent.wall), unit: 'docs/s' },
      { name: 'NFC-e 10 items build+sign / RSA limit, wall clock', value: rsaSpent.wall / nfceSpent.wall, unit: 'ratio' },
      { name: 'NFC-e 10 items build+sign CPU per document', value: nfceSpent.cpu / N, unit: 'ms' },
      { name: 'NFC-e 10 items build+sign median', value: percentile(nfceTimes, 50), unit: 'ms' },
      { name: 'NFC-e 10 items build+sign p99', value: percentile(nfceTimes, 99), unit: 'ms' },
      { name: 'NFC-e 10 items build only median', value: percentile(buildTimes, 50), unit: 'ms' },
      { name: 'NFC-e XSD validation median', value: percentile(nfceValidate, 50), unit: 'ms' },
      { name: 'NFC-e 10 items with IBS/CBS (CRT 3) build+sign per core', value: reformPerSecond, unit: 'docs/s', target: { kind: 'min', value: 1000 } },
      {
        name: 'NFC-e 10 items with IBS/CBS (CRT 3) build+sign / RSA limit',
        value: reformPerSecond / rsaPerSecond,
        unit: 'ratio',
        target: { kind: 'min', value: 0.75 },
      },
      { name: 'NFC-e 10 items with IBS/CBS (CRT 3) build+sign / RSA limit, wall clock', value: rsaSpent.wall / reformSpent.wall, unit: 'ratio' },
      { name: 'NFC-e 10 items with IBS/CBS (CRT 3) build+sign median', value: percentile(reformTimes, 50), unit: 'ms' },
      { name: 'NFC-e 10 items with IBS/CBS (CRT 3) build+sign p99', value: percentile(reformTimes, 99), unit: 'ms' },
      { name: 'NFC-e with IBS/CBS XSD validation median', value: percentile(reformValidate, 50), unit: 'ms' },
      { name: 'MDF-e build+sign throughput', value: N / mdfeSeconds, unit: 'docs/s' },
      { name: 'MDF-e build+sign median', value: percentile(mdfeTimes, 50), unit: 'ms' },
      { name: 'MDF-e XSD validation median', value: percentile(mdfeValidate, 50), unit: 'ms' },
    ];
  },
};
