// Builds and signs NFC-e for the queue on a worker thread. Signing (an RSA signature plus the
// XML around it, 1–3 ms per receipt) was the largest cost of ours on the event loop that also
// answers HTTP; on a machine with two cores the second one can do it. Should the thread fail to
// start or die, receipts are signed on the event loop instead: slower, never stuck.

import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { FieldError, type FieldIssue } from '../../fiscal/errors.ts';
import { issueNfce, type IssueNfceContext } from '../../fiscal/nfce/build.ts';
import type { NfceRequest } from '../../fiscal/nfce/types.ts';

/** Plain data only (it crosses to the thread): the emitter, PEM credentials, dhEmi as written. */
export type SignContext = Omit<IssueNfceContext, 'dhEmi'> & { dhEmi: string };

export type SignTask = { id: number; requestJson: string; context: SignContext };

export type SignResult =
  | { id: number; ok: true; key: string; xml: string; qrCode: string }
  | { id: number; ok: false; issues: FieldIssue[] }
  | { id: number; ok: false; message: string };

export type Signed = { key: string; xml: string; qrCode: string };

type Waiting = { resolve: (signed: Signed) => void; reject: (err: Error) => void };

const READY_TIMEOUT_MS = 15_000;

function signHere(requestJson: string, context: SignContext): Signed {
  const issued = issueNfce(JSON.parse(requestJson) as NfceRequest, context);
  return { key: issued.key, xml: issued.xml, qrCode: issued.qrCode };
}

/**
 * What the thread runs. Compiled (dist/node, bin/build.ts), the worker is an entry point of its
 * own in the folder of the chunk this module went into, which import.meta.filename names
 * (import.meta.url names the source, for data files).
 * From sources (tests, benches) the worker is TypeScript, loaded through tsx.
 */
function workerScript(): { source: string | URL; eval: boolean } {
  if (!import.meta.filename.endsWith('.ts')) {
    return { source: pathToFileURL(join(dirname(import.meta.filename), 'signer.worker.js')), eval: false };
  }
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./signer.worker.ts', import.meta.url).href;
  return { source: `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`, eval: true };
}

export class NfceSigner {
  #worker: Promise<Worker | undefined> | undefined;
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 1;
  #closed = false;

  constructor(private readonly onThreadError: (err: unknown) => void = () => undefined) {}

  /** Signs `requestJson` with `context`; a FieldError for a request that cannot be signed. */
  async sign(requestJson: string, context: SignContext): Promise<Signed> {
    const worker = this.#closed ? undefined : await (this.#worker ??= this.spawn());
    if (!worker) return signHere(requestJson, context);
    const id = this.#nextId++;
    return new Promise<Signed>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage({ id, requestJson, context } satisfies SignTask);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = await this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
    this.failAll(new Error('assinador encerrado'));
  }

  private spawn(): Promise<Worker | undefined> {
    const script = workerScript();
    return new Promise((resolve) => {
      let settled = false;
      const settle = (worker: Worker | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(worker);
      };
      const worker = new Worker(script.source, { eval: script.eval });
      worker.unref();
      const timer = setTimeout(() => {
        this.onThreadError(new Error('a thread de assinatura não ficou pronta'));
        void worker.terminate();
        settle(undefined);
      }, READY_TIMEOUT_MS);
      worker.on('message', (m: SignResult | { ready: true }) => {
        if ('ready' in m) return settle(worker);
        const waiting = this.#waiting.get(m.id);
        if (!waiting) return;
        this.#waiting.delete(m.id);
        if (m.ok) waiting.resolve({ key: m.key, xml: m.xml, qrCode: m.qrCode });
        else waiting.reject('issues' in m ? new FieldError(m.issues) : new Error(m.message));
      });
      const lost = (err: unknown) => {
        if (this.#closed) return;
        this.onThreadError(err);
        // Waiting receipts are retried by the queue; the next one starts a new thread.
        this.#worker = undefined;
        this.failAll(err instanceof Error ? err : new Error(String(err)));
        settle(undefined);
      };
      worker.on('error', lost);
      worker.on('exit', (code) => lost(new Error(`a thread de assinatura terminou (código ${code})`)));
    });
  }

  private failAll(err: Error): void {
    for (const waiting of this.#waiting.values()) waiting.reject(err);
    this.#waiting.clear();
  }
}
