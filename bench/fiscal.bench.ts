// Fiscal core: build + sign throughput for 1,000 NFC-e of 10 items and 1,000 MDF-e, on one core
// (this process), with XSD validation measured separately. The NFC-e twice: of a Simples Nacional
// store (no tax reform groups) and of a regime-normal store (CRT 3: IBSCBS on every item, with a
// mix of full-rate and reduced classifications, vItem, IBSCBSTot, vNFTot), side by side.

import { generateTestCertificate } from '../fiscal/certificate.ts';
import { issueMdfe } from '../fiscal/mdfe/build.ts';
import { issueNfce } from '../fiscal/nfce/build.ts';
import type { NfceRequest } from '../fiscal/nfce/types.ts';
import { demoEmitter, sampleMdfeRequest, sampleNfceRequest } from '../fiscal/samples.ts';
import { precompileSchemas, validateXml } from '../fiscal/schema.ts';
import { percentile, timeEach, type BenchFigure, type BenchSuite } from './types.ts';

const N = 1000;

export const suite: BenchSuite = {
  name: 'fiscal',
  async run(): Promise<BenchFigure[]> {
    const credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'BENCH' }).certificate;
    const emitter = demoEmitter();
    const dhEmi = new Date();
    precompileSchemas(['nfe', 'mdfe']);

    const nfceRequests = Array.from({ length: N }, (_, i) => sampleNfceRequest({ nNF: i + 1, items: 10 }));
    const nfceXml: string[] = [];
    // Warm-up: JIT and lazily loaded tables must not count.
    for (let i = 0; i < 50; i++) issueNfce(nfceRequests[i]!, { emitter, dhEmi, tpEmis: 1, credentials });
    const t0 = performance.now();
    const nfceTimes = await timeEach(N, (i) => nfceXml.push(issueNfce(nfceRequests[i]!, { emitter, dhEmi, tpEmis: 1, credentials }).xml));
    const nfceSeconds = (performance.now() - t0) / 1000;
    const nfceValidate = await timeEach(N, (i) => validateXml(nfceXml[i]!, 'nfe'));

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
    const reformXml: string[] = [];
    for (let i = 0; i < 50; i++) issueNfce(reformRequests[i]!, { emitter: crt3, dhEmi, tpEmis: 1, credentials });
    const t2 = performance.now();
    const reformTimes = await timeEach(N, (i) => reformXml.push(issueNfce(reformRequests[i]!, { emitter: crt3, dhEmi, tpEmis: 1, credentials }).xml));
    const reformSeconds = (performance.now() - t2) / 1000;
    if (!reformXml[0]!.includes('<IBSCBSTot>')) throw new Error('a NFC-e do regime normal saiu sem os grupos da reforma');
    const reformValidate = await timeEach(N, (i) => validateXml(reformXml[i]!, 'nfe'));

    const mdfeEmitter = demoEmitter({ crt: 3 });
    const mdfeRequests = Array.from({ length: N }, (_, i) => sampleMdfeRequest({ nMDF: i + 1 }));
    const mdfeXml: string[] = [];
    for (let i = 0; i < 50; i++) issueMdfe(mdfeRequests[i]!, { emitter: mdfeEmitter, dhEmi, credentials });
    const t1 = performance.now();
    const mdfeTimes = await timeEach(N, (i) => mdfeXml.push(issueMdfe(mdfeRequests[i]!, { emitter: mdfeEmitter, dhEmi, credentials }).xml));
    const mdfeSeconds = (performance.now() - t1) / 1000;
    const mdfeValidate = await timeEach(N, (i) => validateXml(mdfeXml[i]!, 'mdfe'));

    return [
      { name: 'NFC-e 10 items build+sign throughput', value: N / nfceSeconds, unit: 'docs/s', target: { kind: 'min', value: 500 } },
      { name: 'NFC-e 10 items build+sign median', value: percentile(nfceTimes, 50), unit: 'ms' },
      { name: 'NFC-e 10 items build+sign p99', value: percentile(nfceTimes, 99), unit: 'ms' },
      { name: 'NFC-e XSD validation median', value: percentile(nfceValidate, 50), unit: 'ms' },
      { name: 'NFC-e 10 items with IBS/CBS (CRT 3) build+sign throughput', value: N / reformSeconds, unit: 'docs/s', target: { kind: 'min', value: 500 } },
      { name: 'NFC-e 10 items with IBS/CBS (CRT 3) build+sign median', value: percentile(reformTimes, 50), unit: 'ms' },
      { name: 'NFC-e 10 items with IBS/CBS (CRT 3) build+sign p99', value: percentile(reformTimes, 99), unit: 'ms' },
      { name: 'NFC-e with IBS/CBS XSD validation median', value: percentile(reformValidate, 50), unit: 'ms' },
      { name: 'MDF-e build+sign throughput', value: N / mdfeSeconds, unit: 'docs/s' },
      { name: 'MDF-e build+sign median', value: percentile(mdfeTimes, 50), unit: 'ms' },
      { name: 'MDF-e XSD validation median', value: percentile(mdfeValidate, 50), unit: 'ms' },
    ];
  },
};
