// Worker of idempotency.test.ts: one more connection to the same SQLite file, claiming keys at
// the same instant as its siblings. The barrier is shared memory: the test bumps `go` and every
// worker, already waiting on it, claims at once.

import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { openServiceDatabase } from './db.ts';
import type { ClaimResult } from './idempotency-rules.ts';
import { SqliteStore } from './sqlite-store.ts';

export type RaceRound = { key: string; fingerprint: string };
export type RaceWorkerData = { dataDir: string; companyId: string; rounds: RaceRound[]; barrier: SharedArrayBuffer };
export type RaceResult = { round: number; documentId: string; result: ClaimResult };

const { dataDir, companyId, rounds, barrier } = workerData as RaceWorkerData;
const go = new Int32Array(barrier);
const store = new SqliteStore(openServiceDatabase(dataDir, { migrate: false }));

parentPort!.postMessage({ ready: true });
for (let round = 0; round < rounds.length; round++) {
  // Blocks this thread until the test releases round `round` (go > round).
  while (Atomics.load(go, 0) <= round) Atomics.wait(go, 0, round);
  const documentId = randomUUID();
  const { key, fingerprint } = rounds[round]!;
  const result = await store.claimIdempotencyKey({ companyId, docType: 'nfce', key, fingerprint, documentId });
  parentPort!.postMessage({ round, documentId, result } satisfies RaceResult);
}
await store.close();
