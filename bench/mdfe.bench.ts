// MDF-e issuance end to end: the real `balcao service` process (sandbox, authority latency 0),
// POST /api/v1/mdfe/emitir over loopback HTTP, each manifest with its own number and plate (so
// none is blocked by 611 or 204). Everything an issuance does is in the figure: validation,
// build and signature, the SQLite commits of the service, and the simulated authority's own
// checks (schema, signature, rules) and commit.
//
// Latency: one request at a time (p50/p99). Throughput: a few concurrent connections, as several
// terminals or an ERP integration would send.

import { api, createCompany, startService, tempDataDir } from '../test/helpers/service-process.ts';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { percentile, type BenchFigure, type BenchSuite } from './types.ts';

const WARMUP = 50;
const SEQUENTIAL = 500;
const CONCURRENT = 1000;
const CONNECTIONS = 4;

export const suite: BenchSuite = {
  name: 'mdfe',
  async run(): Promise<BenchFigure[]> {
    const dataDir = tempDataDir('balcao-bench-mdfe-');
    const { token } = await createCompany(dataDir, { cnpj: '11222333000181', uf: 'SP', nome: 'Transportadora Bench' });
    const service = await startService({ dataDir, env: { BALCAO_LOG_LEVEL: 'warn' } });
    try {
      const client = api(service.url, token);
      await client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0, disponivel: true });
      let next = 0;
      const issue = async (): Promise<number> => {
        const n = ++next;
        const body = sampleMdfeRequest({ nMDF: n, placa: `BEN${String(n).padStart(4, '0')}` });
        const t0 = process.hrtime.bigint();
        const res = await client.post('/api/v1/mdfe/emitir', body);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (res.status !== 201 || res.body.status !== '100') throw new Error(`emissão ${n} falhou: ${res.status} ${res.text}`);
        return ms;
      };

      for (let i = 0; i < WARMUP; i++) await issue();

      const sequential: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await issue());
      sequential.sort((a, b) => a - b);

      const underLoad: number[] = [];
      let remaining = CONCURRENT;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (remaining-- > 0) underLoad.push(await issue());
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      underLoad.sort((a, b) => a - b);

      return [
        { name: 'MDF-e emitir over HTTP, one at a time, p50', value: percentile(sequential, 50), unit: 'ms' },
        { name: 'MDF-e emitir over HTTP, one at a time, p99', value: percentile(sequential, 99), unit: 'ms', target: { kind: 'max', value: 30 } },
        { name: `MDF-e emitir throughput (${CONNECTIONS} connections)`, value: CONCURRENT / seconds, unit: 'manifests/s', target: { kind: 'min', value: 150 } },
        { name: `MDF-e emitir p99 under load (${CONNECTIONS} connections)`, value: percentile(underLoad, 99), unit: 'ms' },
      ];
    } finally {
      await service.stop();
    }
  },
};
