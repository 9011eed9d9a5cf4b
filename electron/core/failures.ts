// What went wrong in an exchange with the issuance service, as plain data the decisions work on
// (outbox-rules.ts, contingency/reconcile.ts) and people read (service-messages.ts): the
// service's answer (its status, code and fields) or its silence (the network's kind of failure).

import { ServiceHttpError, ServiceNetworkError, type NetworkFailureKind } from './api-client.ts';

export type HttpFailure = {
  kind: 'http';
  status: number;
  code: string;
  message: string;
  details: { field: string; message: string }[];
  /** The tax authority's refusal behind the service's 422, when it is one. */
  rejeicao?: { cStat: string; xMotivo: string };
  retryAfterSeconds?: number;
  documentId?: string;
};
export type NetworkFailure = { kind: 'network'; failure: NetworkFailureKind; message: string };
export type Failure = HttpFailure | NetworkFailure;

export function failureOf(err: unknown): Failure {
  if (err instanceof ServiceHttpError) {
    return {
      kind: 'http',
      status: err.status,
      code: err.code,
      message: err.serviceMessage,
      details: err.details,
      ...(err.rejeicao && { rejeicao: err.rejeicao }),
      ...(err.retryAfterSeconds !== undefined && { retryAfterSeconds: err.retryAfterSeconds }),
      ...(err.documentId !== undefined && { documentId: err.documentId }),
    };
  }
  if (err instanceof ServiceNetworkError) return { kind: 'network', failure: err.kind, message: err.message };
  throw err; // a bug of ours, not a failure of the service
}

export type Result<T> = { ok: true; value: T } | { ok: false; failure: Failure };
