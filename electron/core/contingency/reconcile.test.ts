// Reconciliation rules without a service: what each answer means for the task (pure), the view
// the manager reads, and the re-issue of an in-doubt sale as one transaction on a real SQLite
// file (all of it or nothing).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NfceDocument } from '../api-client.ts';
import { seedDemoCatalog } from '../catalog.ts';
import type { Failure, HttpFailure, Result } from '../failures.ts';
import { PosStore } from '../pos-store.ts';
import * as sales from '../sales.ts';
import { decideLookup, decideReplay, decideSubstitution, decideVoidStep, reconciliationTaskView, supersedeInDoubt } from './reconcile.ts';
import { iso } from '../../../base/common/clock.ts';

const fail = (f: Failure): Result<never> => ({ ok: false, failure: f });
const http = (
  status: number,
  code: string,
  message = 'mensagem',
  extra: { documentId?: string; details?: { field: string; message: string }[] } = {},
): Failure => ({
  kind: 'http',
  status,
  code,
  message,
  details: extra.details ?? [],
  ...(extra.documentId && { documentId: extra.documentId }),
});
const net: Failure = { kind: 'network', failure: 'timeout', message: 'sem resposta' };
const doc = (status: NfceDocument['status']): NfceDocument =>
  ({ id: 'd1', chave: '3'.repeat(44), numero: 1, serie: 1, status, protocolo_cancelamento: status === 'cancelado' ? '135000000000009' : null }) as NfceDocument;

describe('what the answers mean', () => {
  it('looking the first attempt up by its id', () => {
    expect(decideLookup({ ok: true, value: doc('autorizado') })).toMatchObject({ action: 'authorized' });
    expect(decideLookup({ ok: true, value: doc('processando') })).toEqual({ action: 'processing' });
    expect(decideLookup({ ok: true, value: doc('rejeitado') })).toMatchObject({ action: 'rejected' });
    expect(decideLookup({ ok: true, value: doc('cancelado') })).toMatchObject({ action: 'cancelled' });
    expect(decideLookup(fail(http(404, 'nao_encontrado')))).toEqual({ action: 'unknown_id' });
    expect(decideLookup(fail(net))).toMatchObject({ action: 'later' });
    expect(decideLookup(fail(http(500, 'erro_interno')))).toMatchObject({ action: 'later' });
    expect(decideLookup(fail(http(400, 'requisicao_invalida')))).toMatchObject({ action: 'blocked' });
  });

  it('voiding the number: 241 means it was used (authorized); 563/206 that an earlier request of ours voided it', () => {
    expect(decideVoidStep({ ok: true, value: { protocolo: '1', codigo_status: '102', motivo: 'ok' } })).toMatchObject({ action: 'voided' });
    const refused = (cStat: string) =>
      fail(
        http(422, 'validacao', `A autoridade fiscal recusou a inutilização (cStat ${cStat}): texto`, { details: [{ field: 'numero_inicial', message: 'x' }] }),
      );
    expect(decideVoidStep(refused('241'))).toEqual({ action: 'number_used' });
    expect(decideVoidStep(refused('563'))).toEqual({ action: 'voided', result: null });
    expect(decideVoidStep(refused('206'))).toEqual({ action: 'voided', result: null });
    expect(decideVoidStep(refused('999'))).toMatchObject({
      action: 'blocked',
      message: expect.stringMatching(/^O serviço de emissão recusou a inutilização do número: /),
    });
    // The service names the authority's refusal: decided on its cStat, told in its words.
    const byAuthority = (cStat: string) =>
      fail({ ...(http(422, 'validacao', 'texto para integradores') as HttpFailure), rejeicao: { cStat, xMotivo: `Rejeição ${cStat}` } });
    expect(decideVoidStep(byAuthority('241'))).toEqual({ action: 'number_used' });
    expect(decideVoidStep(byAuthority('563'))).toEqual({ action: 'voided', result: null });
    expect(decideVoidStep(byAuthority('999'))).toEqual({ action: 'blocked', message: 'A SEFAZ recusou a inutilização do número (999): Rejeição 999.' });
    expect(decideVoidStep(fail(http(503, 'autoridade_indisponivel')))).toMatchObject({ action: 'later' });
  });

  it('the replay of the first key: the authorized document, or the one in flight; never treated as a new receipt', () => {
    expect(decideReplay({ ok: true, value: { status: 200, replay: true, body: doc('autorizado') } })).toMatchObject({ action: 'authorized' });
    expect(decideReplay({ ok: true, value: { status: 200, replay: true, body: doc('cancelado') } })).toMatchObject({ action: 'cancelled' });
    expect(
      decideReplay({
        ok: true,
        value: {
          status: 202,
          replay: false,
          body: { id: 'n1', chave: '1', status: 'processando', message: '', autoridade: { situacao: 'desconhecida', desde: null } },
        },
      }),
    ).toEqual({
      action: 'accepted',
      serviceId: 'n1',
    });
    expect(decideReplay(fail(http(409, 'em_processamento', 'm', { documentId: 'd9' })))).toEqual({ action: 'accepted', serviceId: 'd9' });
    expect(decideReplay(fail(http(422, 'chave_idempotencia_reutilizada')))).toMatchObject({ action: 'blocked' });
  });

  it('the cancellation by substitution', () => {
    expect(decideSubstitution({ ok: true, value: doc('cancelado') })).toMatchObject({ action: 'cancelled' });
    expect(decideSubstitution(fail(http(422, 'estado_invalido')))).toMatchObject({ action: 'verify' });
    expect(decideSubstitution(fail(http(422, 'prazo_expirado', 'O cancelamento por substituição só é permitido até 168 horas')))).toMatchObject({
      action: 'blocked',
      message: expect.stringMatching(/168 horas/),
    });
    expect(decideSubstitution(fail(net))).toMatchObject({ action: 'later' });
  });
});

// =============================================================================================

let dir: string | undefined;
let store: PosStore | undefined;

afterEach(() => {
  store?.close();
  store = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function openStore(): { store: PosStore; ctx: sales.SalesContext } {
  dir = mkdtempSync(join(tmpdir(), 'balcao-reconcile-'));
  store = PosStore.open(dir);
  const clock = () => Date.parse('2026-11-22T15:00:00.000Z');
  seedDemoCatalog(store, iso(clock()));
  store.series.ensureSeries(1);
  return { store, ctx: { store, clock, serie: 1 } };
}

function finished(ctx: sales.SalesContext) {
  const s = sales.openSale(ctx);
  sales.addItem(ctx, s.id, { code: '1001' });
  sales.addPayment(ctx, s.id, { tPag: '01', amountCents: 2000 });
  return sales.finishSale(ctx, s.id).receipt;
}

const issuer = (fail?: boolean): sales.OfflineIssuer => ({
  serie: 1,
  issue: (request) => {
    if (fail) throw new Error('assinatura falhou');
    return {
      chave: `3526111122233300018165001${String(request.ide.nNF).padStart(9, '0')}9123456780`,
      signedXml: `<NFe n="${request.ide.nNF}"/>`,
      qrcode: 'qr',
      urlConsulta: 'url',
    };
  },
});

describe('issuing an in-doubt sale again offline', () => {
  it('renumbers the receipt, retires the old command, queues the signed XML and keeps the old attempt in a task: together', () => {
    const { store, ctx } = openStore();
    const r = finished(ctx);
    const after = store.transaction(() => supersedeInDoubt(store, ctx.clock, r, issuer()));
    expect(after).toMatchObject({ id: r.id, nnf: 2, serie: 1, tp_emis: 9, state: 'pending', signed_xml: '<NFe n="2"/>' });
    const [task] = store.contingency.reconciliationTasks();
    expect(task).toMatchObject({
      receipt_id: r.id,
      serie: 1,
      nnf: 1,
      idempotency_key: r.idempotency_key,
      request_json: r.request_json,
      kind: 'verificar',
      state: 'open',
    });
    expect(store.outbox.outboxOf(r.id).map((e) => [e.state, e.idempotency_key, e.payload])).toEqual([
      ['failed', r.idempotency_key, r.request_json],
      ['pending', after.idempotency_key, JSON.stringify({ xml: '<NFe n="2"/>' })],
    ]);
    expect(JSON.parse(after.request_json).ide).toEqual({ serie: 1, nNF: 2 });
    expect(reconciliationTaskView(task!, after)).toMatchObject({
      kind: 'inutilizar',
      description: expect.stringMatching(
        /^NFC-e nº 1 \(série 1\), enviada sem resposta antes da contingência; a venda está na NFC-e de contingência nº 2 \(série 1\)/,
      ),
    });
  });

  it('a failure to sign leaves everything as it was (number not taken, no task, the old command live)', () => {
    const { store, ctx } = openStore();
    const r = finished(ctx);
    expect(() => store.transaction(() => supersedeInDoubt(store, ctx.clock, r, issuer(true)))).toThrow('assinatura falhou');
    expect(store.receipts.receipt(r.id)).toEqual(r);
    expect(store.contingency.reconciliationTasks()).toEqual([]);
    expect(store.series.nextNumber(1)).toBe(2);
    expect(store.outbox.outboxOf(r.id).map((e) => e.state)).toEqual(['pending']);
  });
});
