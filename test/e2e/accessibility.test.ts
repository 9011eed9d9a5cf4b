// The checkout for every cashier and every screen, end to end on the real `balcao start` in
// Debian's Chromium, one store and one browser for the whole file:
//
// 1. The audit: each state a cashier and a manager meet (till closed, counter, the quantity,
//    consumer and discard dialogs, payment, receipt, receipts list, preview, cancel, the manager's
//    PIN and every settings tab, the report, the till and its closing) checked by axe-core
//    (WCAG 2.0/2.1 A and AA rules: no serious or critical violation) at 1024×768, then laid out at
//    200 % zoom of a 1024×768 and of a 1366×768 screen: nothing scrolls sideways, and what the
//    state is for (the total, the newest item, Falta and Troco, the receipt's state...) is in the
//    window with nothing over it. Screenshots of each go to test-output/e2e/a11y-*.png.
// 2. A sale at 200 % zoom of each screen, from the first item to "Nova venda", checked the same
//    way at every step.
// 3. Focus: each dialog opens on its first field or main action and gives the focus back to what
//    opened it on Escape (the receipts list to the receipt's row); the settings tabs move with the
//    arrows; focus stays in the till dialog when the till closes behind it.
// 4. What a screen reader hears, read from the browser's accessibility tree: the item added with
//    its price and the total, Falta and Troco, the receipt, and the authority switched off (the
//    contingency that follows, and the receipt issued in it).
//
// Zoom is emulated by the CSS viewport: Chromium at 200 % in a 1366×768 window lays the page out
// in 683×384 CSS pixels with devicePixelRatio 2, which is what a 683×384 viewport at
// deviceScaleFactor 2 is; media queries, layout and scrolling see the same numbers.

import type { Browser, BrowserContext, CDPSession, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AXE_VERSION, blocking, focused, liveRegions, notInView, runAxe, sideways, type AuditFinding } from './a11y-helpers.ts';
import { outboxDump, scan, totalPanel, waitForText } from './checkout-helpers.ts';
import { launchChromium, screenshotDir, startStore, type Store } from './harness.ts';
import { BRASILIA_TZ } from '../../base/common/brasilia.ts';
import { join } from 'node:path';

const DESKTOP = { width: 1024, height: 768 };
const ZOOMS = {
  '1024x768-200': { width: 512, height: 384 },
  '1366x768-200': { width: 683, height: 384 },
} as const;

let store: Store;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  [store, browser] = await Promise.all([startStore({ openTill: false }), launchChromium()]);
  expect(store.screen).toBe(true);
  context = await browser.newContext({ viewport: DESKTOP, deviceScaleFactor: 2, locale: 'en-US', timezoneId: BRASILIA_TZ });
  page = await context.newPage();
  await page.goto(store.checkoutUrl);
});

afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(`--- balcao start ---\n${store.output.slice(-60).join('\n')}\n--- outbox ---\n${outboxDump(store)}`);
});

afterAll(async () => {
  await browser?.close();
  if (store) expect((await store.stop()).code).toBe(0);
});

const dialog = (name: string): Locator => page.getByRole('dialog', { name });
const counterRows = (): Locator => page.getByRole('table', { name: 'Itens da venda' }).locator('tbody tr');
const receiptPanel = (): Locator => page.getByRole('region', { name: 'Venda concluída' });

/** Every check that failed, by state, reported together at the end of a walk. */
const problems: string[] = [];
const audited: string[] = [];

/** Waits for the screen to settle (the last render, a focus ring) before looking. */
const settle = () => page.waitForTimeout(120);

/**
 * The audit of one state: axe at 1024×768, then at each zoom: nothing sideways and `needed` in
 * view, with a screenshot. The viewport is back at 1024×768 afterwards.
 */
async function check(state: string, needed: () => Locator[] = () => [], options: { screenshots?: boolean } = {}): Promise<void> {
  audited.push(state);
  await settle();
  const findings: AuditFinding[] = await runAxe(page);
  for (const f of blocking(findings)) problems.push(`${state}: axe ${f.rule} (${f.impact}) ${f.help} — ${f.targets.slice(0, 3).join(', ')}`);
  if (options.screenshots) await page.screenshot({ path: join(screenshotDir, `a11y-${state}-1024x768.png`), scale: 'css' });
  for (const [zoom, size] of Object.entries(ZOOMS)) {
    await page.setViewportSize(size);
    await settle();
    problems.push(...(await layoutProblems(`${state} @${zoom}`, needed())));
    // The window as the cashier sees it (2 device pixels per CSS pixel: 1024×768 and 1366×768 images).
    if (options.screenshots) await page.screenshot({ path: join(screenshotDir, `a11y-${state}-${zoom}.png`) });
  }
  await page.setViewportSize(DESKTOP);
}

/** What scrolls sideways, and each of `needed` not fully in view. */
async function layoutProblems(where: string, needed: Locator[]): Promise<string[]> {
  const found = (await sideways(page)).map((s) => `${where}: rola para o lado: ${s}`);
  for (const locator of needed) {
    const why = await notInView(locator.first());
    if (why) found.push(`${where}: ${locator.toString()} ${why}`);
  }
  return found;
}

/** The dialog's decisive buttons (its last .dialog-actions), when it has any. */
const dialogActions = (d: Locator): Locator => d.locator('.dialog-actions').last();

const closeAll = async () => {
  while ((await page.getByRole('dialog').count()) > 0) await page.keyboard.press('Escape');
};

describe('accessibility of the checkout', () => {
  it(`has no serious or critical WCAG 2.1 A/AA violation (axe-core ${AXE_VERSION}) in any state, and holds at 200 % zoom`, async () => {
    // Till closed.
    const closed = page.getByRole('region', { name: 'Caixa fechado' });
    await closed.waitFor();
    await check('caixa-fechado', () => [closed.getByLabel('Operador(a)')], { screenshots: true });
    await closed.getByLabel('Operador(a)').fill('Ana');
    await closed.getByLabel('Troco inicial').fill('0,00');
    await closed.getByRole('button', { name: 'Abrir caixa' }).click();
    const input = page.getByLabel('Código ou nome do produto');
    await input.waitFor();
    await check('balcao-vazio', () => [input, totalPanel(page)]);

    // The counter with items: the total and the newest line in view.
    await scan(page, '7891000100103', '7891910000197', '7896005800010', '7891000053508', '7896036090244');
    await expect.poll(() => counterRows().count()).toBe(5);
    await waitForText(totalPanel(page), '5 itens');
    await page.keyboard.press('ArrowUp');
    await check('balcao-itens', () => [totalPanel(page), counterRows().and(page.locator('[aria-current="true"]')), input], { screenshots: true });

    // The dialogs of the counter.
    await page.keyboard.press('*');
    await check('alterar-quantidade', () => [dialogActions(dialog('Alterar quantidade'))]);
    await page.keyboard.press('Escape');
    await page.keyboard.press('F4');
    await check('consumidor', () => [dialogActions(dialog('Consumidor'))]);
    await page.keyboard.press('Escape');
    await page.keyboard.press('F8');
    await check('cancelar-venda', () => [dialogActions(dialog('Cancelar venda'))]);
    await page.keyboard.press('Escape');

    // Payment: Falta and Troco in view with "Valor recebido" and the way to finish.
    await page.keyboard.press('F2');
    const payment = dialog('Pagamento');
    // Static PIX: the QR Code large, and the cashier's confirmation, reachable at every zoom.
    await payment.getByRole('radio', { name: 'PIX Estático' }).check();
    await payment.getByRole('button', { name: /Mostrar QR Code PIX/ }).click();
    await check('pix-estatico', () => [payment.getByRole('button', { name: 'Confirmar recebimento do PIX' })], { screenshots: true });
    await payment.getByRole('button', { name: 'Voltar' }).click();
    // Dynamic PIX: the charge's actions in view at every zoom; cancelled, the form again.
    await payment.getByRole('radio', { name: 'PIX Dinâmico' }).check();
    await payment.getByRole('button', { name: /Mostrar QR Code PIX/ }).click();
    await waitForText(payment, 'aguardando pagamento');
    await check(
      'pix-dinamico',
      () => [payment.getByRole('button', { name: 'Cancelar cobrança' }), payment.getByRole('button', { name: 'Simular pagamento' })],
      {
        screenshots: true,
      },
    );
    await payment.getByRole('button', { name: 'Cancelar cobrança' }).click();
    await waitForText(payment, 'Cobrança cancelada');
    await payment.getByRole('button', { name: 'Voltar' }).click();
    await payment.getByRole('radio', { name: 'Dinheiro' }).check();
    await payment.getByLabel('Valor recebido').fill('50,00');
    await page.keyboard.press('Enter');
    await waitForText(payment, /Falta\s*R\$/);
    const summary = (term: string) => payment.locator('.summary div').filter({ hasText: term });
    await check(
      'pagamento',
      () => [summary('Falta'), summary('Troco'), payment.getByLabel('Valor recebido'), payment.getByRole('button', { name: /Finalizar venda/ })],
      { screenshots: true },
    );
    await payment.getByLabel('Valor recebido').fill('20,00');
    await page.keyboard.press('Enter');
    // "Troco R$ 0,00" shows before the line is added: F2 waits for the sale to be payable.
    await waitForText(payment, /Troco\s*R\$\u00a0\d/);
    await expect.poll(() => payment.getByRole('button', { name: /Finalizar venda/ }).isEnabled()).toBe(true);
    await page.keyboard.press('F2');

    // The receipt: its state, the change and "Nova venda" never clipped by the DANFE.
    await waitForText(receiptPanel().getByRole('status'), 'Autorizada');
    await receiptPanel()
      .getByRole('img', { name: /DANFE NFC-e/ })
      .waitFor();
    await check(
      'recibo',
      () => [
        receiptPanel().getByRole('status'),
        receiptPanel().locator('.summary div').filter({ hasText: 'Troco' }),
        receiptPanel().getByRole('button', { name: /Nova venda/ }),
      ],
      { screenshots: true },
    );

    await page.keyboard.press('Enter'); // "Nova venda"
    await input.waitFor();

    // The receipts list, a receipt's preview and its cancellation.
    await page.keyboard.press('F9');
    const receipts = dialog('Recibos recentes');
    const row = receipts.getByRole('row').filter({ hasText: 'Autorizada' }).first();
    await row.waitFor();
    await check('recibos', () => [row.locator('td[data-label="Tempo para cancelar"]'), row.getByRole('button', { name: 'Cancelar NFC-e' })], {
      screenshots: true,
    });
    await row.getByRole('button', { name: 'Ver' }).click();
    await dialog('DANFE NFC-e').getByRole('img').waitFor();
    await check('recibo-visualizar');
    await page.keyboard.press('Escape');
    await receipts.getByRole('row').filter({ hasText: 'Autorizada' }).first().getByRole('button', { name: 'Cancelar NFC-e' }).click();
    const cancel = dialog('Cancelar NFC-e');
    await cancel.getByLabel('PIN do gerente').waitFor();
    await check('cancelar-nfce', () => [dialogActions(cancel)]);
    await closeAll();

    // The manager: the PIN, then every tab, and the report with its chart.
    await page.keyboard.press('F10');
    const settings = dialog('Gerente: configurações');
    await check('gerente-pin', () => [dialogActions(settings)]);
    await settings.getByLabel('PIN do gerente').fill(store.manager.pin);
    await settings.getByRole('button', { name: 'Continuar' }).click();
    for (const tab of [
      'Serviço',
      'Impressora',
      'Balança',
      'Empresa',
      'Contingência',
      'Certificado',
      'Catálogo',
      'Caixa',
      'PIX (PSP)',
      'Relatórios',
      'Exportação',
    ]) {
      await settings.getByRole('tab', { name: tab }).click();
      await settings.getByRole('tabpanel').locator('form, section, h3').first().waitFor();
      await check(`gerente-${tab}`);
    }
    await settings.getByRole('tab', { name: 'Relatórios' }).click();
    await settings.getByRole('button', { name: 'Gerar relatório' }).click();
    await settings.getByRole('region', { name: 'Relatório de vendas' }).waitFor();
    await check('gerente-relatorio', () => [], { screenshots: true });
    await closeAll();

    // The till, and its closing.
    await page.getByRole('button', { name: 'Caixa', exact: true }).click();
    const till = dialog('Caixa');
    await check('caixa', () => [dialogActions(till)]);
    await till.getByRole('button', { name: 'Fechar caixa' }).click();
    await till.getByLabel('Contado em Dinheiro').fill('0,00');
    await check('caixa-fechar', () => [dialogActions(till)]);
    await till.getByRole('button', { name: 'Fechar caixa' }).click();
    await till.getByRole('table', { name: 'Fechamento por forma de pagamento' }).waitFor();
    await check('caixa-fechado-relatorio', () => [dialogActions(till)], { screenshots: true });
    await till.getByRole('button', { name: 'Concluir' }).click();

    // Open again for the tests below.
    await closed.getByLabel('Operador(a)').fill('Ana');
    await closed.getByLabel('Troco inicial').fill('0,00');
    await closed.getByRole('button', { name: 'Abrir caixa' }).click();
    await input.waitFor();

    console.info(`axe-core ${AXE_VERSION}: ${audited.length} estados auditados: ${audited.join(', ')}`);
    expect(problems).toEqual([]);
  }, 300_000);

  it('sells at 200 % zoom of 1024×768 and of 1366×768: total, Troco and state in view at every step, nothing sideways', async () => {
    const input = page.getByLabel('Código ou nome do produto');
    const seen = async (where: string, needed: Locator[]) => {
      await settle();
      expect(await layoutProblems(where, needed)).toEqual([]);
    };
    const total = totalPanel(page).locator('.total-value');
    for (const [zoom, size] of Object.entries(ZOOMS)) {
      await page.setViewportSize(size);
      await input.waitFor();
      await seen(`${zoom} vazio`, [input, total]);
      // Six items, the list longer than the window: the total and the newest line stay in view.
      const codes = ['7891000100103', '7891910000197', '7896005800010', '7891000053508', '7896036090244', '7891000100103'];
      for (const [i, code] of codes.entries()) {
        await scan(page, code);
        await expect.poll(() => counterRows().count()).toBe(i + 1);
        await seen(`${zoom} item ${i + 1}`, [total, counterRows().last()]);
      }
      await page.keyboard.press('F2');
      const payment = dialog('Pagamento');
      const amount = payment.getByLabel('Valor recebido');
      const summary = (term: string) => payment.locator('.summary div').filter({ hasText: term });
      await seen(`${zoom} pagamento`, [summary('Falta'), summary('Troco'), amount]);
      await amount.fill('100,00');
      await page.keyboard.press('Enter');
      await waitForText(summary('Troco'), /R\$\u00a0[1-9]/);
      await seen(`${zoom} pago`, [summary('Falta'), summary('Troco'), payment.getByRole('button', { name: /Finalizar venda/ })]);
      await expect.poll(() => payment.getByRole('button', { name: /Finalizar venda/ }).isEnabled()).toBe(true);
      await page.keyboard.press('F2');
      const panel = receiptPanel();
      await waitForText(panel.getByRole('status'), 'Autorizada');
      await panel.getByRole('img', { name: /DANFE NFC-e/ }).waitFor();
      await seen(`${zoom} recibo`, [
        panel.getByRole('status'),
        panel.locator('.summary div').filter({ hasText: 'Troco' }),
        panel.getByRole('button', { name: /Nova venda/ }),
      ]);
      await page.screenshot({ path: join(screenshotDir, `a11y-venda-${zoom}.png`) });
      await page.keyboard.press('Enter'); // "Nova venda"
    }
    await page.setViewportSize(DESKTOP);
  }, 180_000);

  it('opens each dialog on its first field or main action, gives the focus back on Escape, and moves the tabs with the arrows', async () => {
    const input = page.getByLabel('Código ou nome do produto');
    const PRODUCT = 'combobox: Código ou nome do produto';
    await expect.poll(() => focused(page)).toBe(PRODUCT);
    await scan(page, '7891000053508');
    await expect.poll(() => counterRows().count()).toBe(1);

    const opening: [key: string, title: string, first: string][] = [
      ['F4', 'Consumidor', 'input: CPF ou CNPJ do consumidor'],
      ['F8', 'Cancelar venda', 'button: Voltar'],
      ['*', 'Alterar quantidade', 'input: Nova quantidade (UN)'],
      ['F2', 'Pagamento', 'input: Valor recebido'],
      ['F9', 'Recibos recentes', 'button: Ver'],
      ['F10', 'Gerente: configurações', 'input: PIN do gerente'],
    ];
    for (const [key, title, first] of opening) {
      await page.keyboard.press(key);
      await dialog(title).waitFor();
      await expect.poll(() => focused(page), { message: `${key}: ${title}` }).toBe(first);
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      await expect.poll(() => focused(page), { message: `Esc em ${title}` }).toBe(PRODUCT);
    }

    // From the receipts list to a receipt's dialog and back: on that receipt's row.
    await page.keyboard.press('F9');
    const receipts = dialog('Recibos recentes');
    const row = receipts
      .getByRole('row')
      .filter({ has: page.getByRole('button', { name: 'Cancelar NFC-e' }) })
      .first();
    const rowName = await row.getAttribute('aria-label');
    const focusedRow = () => page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('aria-label') ?? null);
    for (const [action, title, first] of [
      ['Cancelar NFC-e', 'Cancelar NFC-e', 'input: PIN do gerente'],
      ['Reimprimir', 'Reimprimir NFC-e', 'input: PIN do gerente'],
      ['Ver', 'DANFE NFC-e', 'region: Pré-visualização do DANFE'],
    ] as const) {
      await receipts.getByRole('row', { name: rowName! }).getByRole('button', { name: action, exact: true }).click();
      await expect.poll(() => focused(page), { message: title }).toBe(first);
      await page.keyboard.press('Escape');
      await receipts.waitFor();
      await expect.poll(() => focused(page), { message: `de volta de ${title}` }).toBe(`button: ${action}`);
      expect(await focusedRow()).toBe(rowName);
    }
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toBe(PRODUCT);

    // The manager's tabs: the selected one takes the focus, the arrows, Home and End move it.
    await page.keyboard.press('F10');
    const settings = dialog('Gerente: configurações');
    await expect.poll(() => focused(page)).toBe('input: PIN do gerente');
    await page.keyboard.type(store.manager.pin);
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('tab: Serviço');
    const selected = () => settings.getByRole('tab', { selected: true }).textContent();
    for (const [key, tab] of [
      ['ArrowRight', 'Impressora'],
      ['ArrowRight', 'Balança'],
      ['ArrowLeft', 'Impressora'],
      ['End', 'Exportação'],
      ['ArrowRight', 'Serviço'],
      ['Home', 'Serviço'],
      ['ArrowLeft', 'Exportação'],
    ] as const) {
      await page.keyboard.press(key);
      await expect.poll(selected, { message: key }).toBe(tab);
      expect(await focused(page)).toBe(`tab: ${tab}`);
    }
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toBe(PRODUCT);

    // The till: the focus stays in its dialog when the till closes behind it (the counter gives
    // way to "Abrir caixa", whose field must not take it), and goes back to "Caixa" after.
    await page.keyboard.press('F8');
    await dialog('Cancelar venda').getByRole('button', { name: 'Descartar venda' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    const tillButton = page.getByRole('button', { name: 'Caixa', exact: true });
    await tillButton.focus();
    await page.keyboard.press('Enter');
    const till = dialog('Caixa');
    await expect.poll(() => focused(page)).toBe('button: Fechar caixa');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('input: Contado em Dinheiro');
    await page.keyboard.type('0,00');
    await page.keyboard.press('Enter');
    await till.getByRole('table', { name: 'Fechamento por forma de pagamento' }).waitFor();
    await page.getByRole('region', { name: 'Caixa fechado' }).waitFor();
    await expect.poll(() => focused(page)).toBe('button: Concluir');
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toBe('button: Caixa');

    const closed = page.getByRole('region', { name: 'Caixa fechado' });
    await closed.getByLabel('Operador(a)').fill('Ana');
    await closed.getByLabel('Troco inicial').fill('0,00');
    await closed.getByRole('button', { name: 'Abrir caixa' }).click();
    await input.waitFor();
  }, 120_000);

  it("reads out the item added, Falta and Troco, the receipt, and the contingency when the authority is switched off, from the browser's accessibility tree", async () => {
    const cdp: CDPSession = await context.newCDPSession(page);
    /** Everything the live regions hold, by politeness. */
    const heard = async (live: 'polite' | 'assertive') =>
      (await liveRegions(cdp))
        .filter((r) => r.live === live)
        .map((r) => r.text)
        .join(' | ');

    await scan(page, '7896036090244'); // Óleo de soja 900ml, 7,89
    await expect.poll(() => heard('polite')).toContain('Item adicionado: Óleo de soja 900ml, 1 UN a R$ 7,89, R$ 7,89. Total R$ 7,89, 1 item.');
    await waitForText(totalPanel(page), 'R$\u00a07,89');

    await page.keyboard.press('F2');
    const payment = dialog('Pagamento');
    await payment.getByLabel('Valor recebido').fill('2,00');
    await page.keyboard.press('Enter');
    // Said while the payment dialog is open: the live regions are inside it, not hidden behind it.
    await expect.poll(() => heard('polite')).toContain('Pagamento lançado: Dinheiro R$ 2,00. Falta R$ 5,89.');
    await payment.getByLabel('Valor recebido').fill('10,00');
    await page.keyboard.press('Enter');
    await expect.poll(() => heard('polite')).toContain('Pagamento lançado: Dinheiro R$ 10,00. Pago. Troco R$ 4,11.');
    await page.keyboard.press('F2');
    await expect.poll(() => heard('polite')).toMatch(/Venda concluída: NFC-e nº \d+, (Pendente|Processando|Autorizada)\. Troco R\$ 4,11\./);
    await expect
      .poll(async () => (await liveRegions(cdp)).find((r) => r.role === 'status' && r.text.startsWith('Situação'))?.text)
      .toBe('Situação: Autorizada');
    await page.keyboard.press('Enter'); // "Nova venda"

    // The authority stops answering: the next sale is issued offline, and that interrupts.
    const off = await fetch(`${store.serviceUrl}/api/v1/sandbox/autoridade`, {
      method: 'POST',
      headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ disponivel: false, latencia_ms: 0 }),
    });
    expect(off.status).toBe(200);
    await scan(page, '7891000053508');
    await expect.poll(() => counterRows().count()).toBe(1);
    await waitForText(totalPanel(page), 'R$\u00a05,29');
    await page.keyboard.press('F2');
    await payment.getByLabel('Valor recebido').fill('10,00');
    await page.keyboard.press('Enter');
    await waitForText(payment, /Troco\s*R\$\u00a04,71/);
    await page.keyboard.press('F2');
    await expect
      .poll(() => heard('assertive'), { timeout: 60_000 })
      .toContain('Contingência offline ativa: as NFC-e são emitidas neste caixa e transmitidas depois.');
    await expect
      .poll(() => heard('assertive'), { timeout: 30_000 })
      .toMatch(/NFC-e nº \d+ emitida em contingência offline: será transmitida quando o serviço voltar\./);
    await page.screenshot({ path: join(screenshotDir, 'a11y-contingencia.png') });
  }, 120_000);
});
