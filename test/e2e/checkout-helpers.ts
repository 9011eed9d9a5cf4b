// What the checkout e2e tests share: driving the screen as a cashier does (by labels, roles and
// keys) and reading what the service and the virtual printer really got.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { decodeEscPos, type Transcript } from '../escpos-decoder.ts';
import { screenshot, type Store } from './harness.ts';

/** Scans (types + Enter) each code into the always-focused product input. */
export async function scan(page: Page, ...codes: string[]): Promise<void> {
  for (const code of codes) {
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
  }
}

export const totalPanel = (page: Page): Locator => page.getByRole('region', { name: 'Total da venda' });

/** Waits until `locator`'s text matches, polling (the screen follows the core asynchronously). */
export async function waitForText(locator: Locator, expected: string | RegExp, timeoutMs = 60_000): Promise<void> {
  await expect
    .poll(async () => ((await locator.count()) ? ((await locator.first().textContent()) ?? '') : ''), { timeout: timeoutMs, interval: 100 })
    .toMatch(expected instanceof RegExp ? expected : new RegExp(expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
}

/** The terminal's record of a receipt, read straight from its database (read-only). */
export function terminalReceipt(store: Store, nNF: number): { id: string; service_id: string | null; state: string } {
  const db = new Database(join(store.dataDir, 'terminal', 'pos.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT id, service_id, state FROM receipts WHERE nnf = ? ORDER BY created_at DESC').get(nNF) as {
      id: string;
      service_id: string | null;
      state: string;
    };
  } finally {
    db.close();
  }
}

/** The terminal's receipts and outbox entries, one line each, for a failed test's report. */
export function outboxDump(store: Store): string {
  const db = new Database(join(store.dataDir, 'terminal', 'pos.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(
        `SELECT r.nnf, r.state AS receipt, r.service_id, o.kind, o.state AS entry, o.attempts, o.next_attempt_at - (unixepoch('subsec') * 1000) AS due_in_ms, o.last_error
         FROM receipts r LEFT JOIN outbox o ON o.receipt_id = r.id ORDER BY r.created_at, o.seq`,
      )
      .all();
    return rows.map((row) => JSON.stringify(row)).join('\n');
  } finally {
    db.close();
  }
}

/** GET /api/v1/nfce/{id} at the service, with the demo company's token. */
export async function serviceReceipt(store: Store, serviceId: string): Promise<{ status: string; numero: number; cancelado_em: string | null }> {
  const res = await fetch(`${store.serviceUrl}/api/v1/nfce/${serviceId}`, { headers: { authorization: `Bearer ${store.token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { status: string; numero: number; cancelado_em: string | null };
}

/** The job files the virtual printer wrote. */
export function printerJobs(store: Store): string[] {
  return existsSync(store.printerDir) ? readdirSync(store.printerDir).filter((f) => f.endsWith('.bin')) : [];
}

/** The last job the virtual printer wrote, as the printer reads it. */
export function lastPrintedJob(store: Store): Transcript {
  const last = printerJobs(store).sort().at(-1)!;
  return decodeEscPos(readFileSync(join(store.printerDir, last)));
}

/** A document's XML at the service (`nfce`, `nfe`, `mdfe`), with the demo company's token. */
export async function serviceXml(store: Store, kind: 'nfce' | 'nfe' | 'mdfe', id: string): Promise<string> {
  const res = await fetch(`${store.serviceUrl}/api/v1/${kind}/${id}/xml`, { headers: { authorization: `Bearer ${store.token}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The sandbox clock of the demo company moves forward (service/http/sandbox-routes.ts). */
export async function advanceSandboxClock(store: Store, minutes: number): Promise<void> {
  const res = await fetch(`${store.serviceUrl}/api/v1/sandbox/relogio`, {
    method: 'POST',
    headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ avancar_minutos: minutes }),
  });
  expect(res.status).toBe(200);
}

/**
 * A sale the authority rejects (391), made behind the screen over the same bridge it uses: the
 * screen always sends a card's data, so only a caller of the bridge can leave it out. Returns
 * its nNF.
 */
export async function saleRejected391(store: Store): Promise<number> {
  const sale = await rpc<{ id: string }>(store, 'openSale', []);
  await rpc(store, 'addItem', [sale.id, { code: '1001' }]);
  await rpc(store, 'addPayment', [sale.id, { tPag: '03', amountCents: 1890 }]); // credit card, no card group
  return (await rpc<{ receipt: { nNF: number } }>(store, 'finishSale', [sale.id])).receipt.nNF;
}

/** A call to the terminal over the bridge the screen uses (browser-mode host), with its secret. */
export async function rpc<T = unknown>(store: Store, method: string, args: unknown[]): Promise<T> {
  const res = await fetch(`${store.origin}/api/rpc/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${store.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ args }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: T }).result;
}

/** One sale paid in cash, finished, and in `state` (authorized): returns its nNF as the screen shows it. */
export async function sellInCash(page: Page, codes: string[], cash: string, state: string | RegExp = 'Autorizada'): Promise<number> {
  await scan(page, ...codes);
  // F2 opens the payment only once the sale has a total: wait for the last line.
  await expect.poll(() => page.getByRole('table').locator('tbody tr').count()).toBe(codes.length);
  await page.keyboard.press('F2');
  const dialog = page.getByRole('dialog', { name: 'Pagamento' });
  await dialog.getByLabel('Valor recebido').fill(cash);
  await page.keyboard.press('Enter');
  await dialog.getByRole('button', { name: /Finalizar venda/ }).click();
  const panel = page.getByRole('region', { name: 'Venda concluída' });
  await waitForText(panel.getByRole('status'), state);
  const number = /NFC-e nº (\d+)/.exec((await panel.textContent()) ?? '');
  return Number(number?.[1]);
}

/**
 * F4, the consumer's document typed wrong and refused on screen with `refusal` (naming the field),
 * then typed right and shown on the total panel as `shown`.
 */
export async function consumerAfterRefusal(page: Page, typed: { wrong: string; refusal: string; right: string; shown: string }): Promise<void> {
  await page.keyboard.press('F4');
  const dialog = page.getByRole('dialog', { name: 'Consumidor' });
  await dialog.getByLabel('CPF ou CNPJ do consumidor').fill(typed.wrong);
  await page.keyboard.press('Enter');
  await waitForText(dialog.getByRole('alert'), typed.refusal);
  await dialog.getByLabel('CPF ou CNPJ do consumidor').fill(typed.right);
  await page.keyboard.press('Enter');
  await waitForText(totalPanel(page), typed.shown);
}

/** A screenshot under test-output/e2e/ (harness naming), after the screen settled. */
export async function screenshotOf(page: Page, name: string): Promise<string> {
  await page.waitForTimeout(150); // let the last render and the focus ring land
  return screenshot(page, name);
}

/** F10, the manager's PIN, then the tab: the manager's settings dialog. */
export async function openSettings(page: Page, store: Store, tab: string): Promise<Locator> {
  await page.keyboard.press('F10');
  const settings = page.getByRole('dialog', { name: 'Gerente: configurações' });
  await settings.getByLabel('PIN do gerente').fill(store.manager.pin);
  await settings.getByRole('button', { name: 'Continuar' }).click();
  await settings.getByRole('tab', { name: tab }).click();
  return settings;
}
