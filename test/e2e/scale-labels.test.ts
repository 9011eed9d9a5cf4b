// Scale labels and the system printer end to end: the real `balcao start` and the built screen in
// headless Chromium, driven by visible labels, with the receipt printed through Debian's CUPS (a
// private cupsd started here, a raw queue whose device is an AppSocket printer on loopback).
//
// 1. The manager sets the printer to "Impressora do sistema": a queue name with a space is refused
//    on screen, naming what to type; the queue's IPP address is saved.
// 2. The manager turns scale labels on in the Toledo layout 2 CCCC 0 TTTTTT D (price); a price
//    label of bread enters "Pão francês" with the weight its total pays and the label's total;
//    a label with a wrong check digit is refused with a message and adds nothing.
// 3. The layout becomes 2 CCCCC 0 PPPPP D (weight); a weight label enters 0,5 kg and its total.
// 4. The sale is paid in cash and authorized; the receipt reaches the queue's device, and the
//    ESC/POS decoder reads the two weighed lines on it.

import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAppSocketPrinter, startCupsd, type AppSocketPrinter, type CupsTestServer } from '../helpers/cups-test-server.ts';
import { decodeEscPos } from '../escpos-decoder.ts';
import { ean13, withWrongCheckDigit } from '../helpers/scale-labels.ts';
import { openSettings, outboxDump, scan, screenshotOf, totalPanel, waitForText } from './checkout-helpers.ts';
import { launchChromium, openCheckout, startStore, type Store } from './harness.ts';

let store: Store;
let browser: Browser;
let page: Page;
let cups: CupsTestServer;
let device: AppSocketPrinter;

beforeAll(async () => {
  device = await startAppSocketPrinter();
  [store, browser, cups] = await Promise.all([startStore(), launchChromium(), startCupsd([{ name: 'caixa', device: `socket://127.0.0.1:${device.port}` }])]);
  expect(store.screen).toBe(true);
  page = await openCheckout(browser, store.checkoutUrl);
});

afterEach((context) => {
  if (context.task.result?.state === 'fail') {
    console.error(`--- balcao start ---\n${store.output.slice(-80).join('\n')}\n--- outbox ---\n${outboxDump(store)}\n--- cupsd ---\n${cups?.log()}`);
  }
});

afterAll(async () => {
  await browser?.close();
  if (store) expect((await store.stop()).code).toBe(0);
  await cups?.stop();
  await device?.close();
});

async function closeDialogs(): Promise<void> {
  await page.keyboard.press('Escape');
  await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
}

/** The sale's line for `description`, as the items table shows it. */
const line = (description: string) => page.getByRole('table').getByRole('row').filter({ hasText: description });

describe('scale labels and the system printer', () => {
  it('prints through a CUPS queue set on screen, and sells bread by a price label and by a weight label', async () => {
    // The screen is up (its keys work) once the product input holds the focus.
    const input = page.getByLabel('Código ou nome do produto');
    await expect.poll(() => input.evaluate((el) => el === document.activeElement)).toBe(true);

    // 1. The printer: a CUPS queue.
    let settings = await openSettings(page, store, 'Impressora');
    await settings.getByLabel('Tipo de impressora').selectOption('Impressora do sistema (fila do CUPS ou do Windows)');
    const queue = settings.getByLabel('Fila da impressora do sistema (nome ou endereço IPP)');
    await waitForText(settings, 'O nome da fila no CUPS deste computador (ex.: TM-T20; lpstat -p lista as filas)');
    await queue.fill('fila do caixa');
    await settings.getByRole('button', { name: 'Salvar impressora' }).click();
    await waitForText(settings.getByRole('alert'), /^Fila da impressora do sistema: o nome da fila no CUPS deste computador \(ex\.: TM-T20, sem espaços/);
    await queue.fill(`ipp://${cups.server}/printers/caixa`);
    await settings.getByRole('button', { name: 'Salvar impressora' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');

    // 2. Scale labels, Toledo's price layout.
    await settings.getByRole('tab', { name: 'Balança' }).click();
    await settings.getByLabel('Ler etiquetas de balança no caixa').check();
    await settings.getByLabel('Dígitos do código do produto').selectOption('4');
    await settings.getByLabel('Dígitos do valor').selectOption('6');
    await settings.getByLabel('A etiqueta traz').selectOption('Preço total');
    await settings.getByLabel('Casas decimais do valor').selectOption('2');
    await waitForText(settings, 'Formato: 2 CCCC 0 TTTTTT D');
    await screenshotOf(page, 'balanca-configuracao');
    await settings.getByRole('button', { name: 'Salvar balança' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');

    // How long this checkout keeps its documents: refused out of bounds, naming the field; then saved.
    await settings.getByRole('tab', { name: 'Retenção' }).click();
    const days = settings.getByLabel('Dias de documentos guardados neste caixa');
    expect(await days.inputValue()).toBe('90');
    await days.fill('3');
    await settings.getByRole('button', { name: 'Salvar retenção' }).click();
    await waitForText(settings.getByRole('alert'), /Dias de documentos guardados neste caixa: inteiro de 7 a 1825/);
    await days.fill('30');
    await settings.getByRole('button', { name: 'Salvar retenção' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');
    await closeDialogs();

    const priceLabel = ean13('2' + '1006' + '0' + '000529'); // Pão francês, R$ 5,29
    await scan(page, priceLabel);
    // R$ 14,90/kg: 0,355 kg gives 5,2895 → R$ 5,29, the label's total.
    await waitForText(line('Pão francês'), /0,355\s*KG.*R\$\u00a014,90.*R\$\u00a05,29/);
    await waitForText(totalPanel(page), 'R$\u00a05,29');

    await scan(page, withWrongCheckDigit(ean13('2' + '1006' + '0' + '000790')));
    await waitForText(
      page.getByRole('alert').filter({ hasText: 'Etiqueta de balança' }),
      /^Etiqueta de balança 2100600007\d{3} com dígito verificador inválido \(o último dígito deveria ser \d\)/,
    );
    expect(await page.getByRole('table').locator('tbody tr').count()).toBe(1);
    await screenshotOf(page, 'balanca-digito-invalido');

    // 3. The weight layout: 2 CCCCC 0 PPPPP D, grams.
    settings = await openSettings(page, store, 'Balança');
    await settings.getByLabel('Dígitos do código do produto').selectOption('5');
    await settings.getByLabel('Dígitos do valor').selectOption('5');
    await settings.getByLabel('A etiqueta traz').selectOption('Peso (kg)');
    await settings.getByLabel('Casas decimais do valor').selectOption('3');
    await waitForText(settings, 'Formato: 2 CCCCC 0 PPPPP D');
    await settings.getByRole('button', { name: 'Salvar balança' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');
    await closeDialogs();

    await scan(page, ean13('2' + '01006' + '0' + '00500')); // 0,500 kg
    await expect.poll(() => page.getByRole('table').locator('tbody tr').count()).toBe(2);
    // 0,5 kg × R$ 14,90 = R$ 7,45
    await waitForText(page.getByRole('table').locator('tbody tr').nth(1), /Pão francês.*0,5\s*KG.*R\$\u00a014,90.*R\$\u00a07,45/);
    await waitForText(totalPanel(page), 'R$\u00a012,74');
    await screenshotOf(page, 'balanca-etiquetas');

    // 4. Paid, authorized, printed through the CUPS queue.
    const printed = device.nextJob();
    await page.keyboard.press('F2');
    const payment = page.getByRole('dialog', { name: 'Pagamento' });
    await payment.getByLabel('Valor recebido').fill('20,00');
    await page.keyboard.press('Enter');
    await payment.getByRole('button', { name: /Finalizar venda/ }).click();
    await waitForText(page.getByRole('region', { name: 'Venda concluída' }).getByRole('status'), 'Autorizada');
    const text = decodeEscPos(await printed)
      .lines.map((l) => l.text)
      .join('\n');
    expect(text).toMatch(/Pão francês/i);
    expect(text).toMatch(/0,355 KG/);
    expect(text).toMatch(/0,5 KG/);
    expect(text).toMatch(/5,29/);
    expect(text).toMatch(/7,45/);
    expect(text).toMatch(/12,74/);
  });
});
