// The status bar end to end: what the cashier sees of the service, the queue, the offline
// contingency and the printer, on the real `balcao start` in headless Chromium, with the causes
// made real rather than pretended:
//
// 1. Online: the service answers, nothing waits, contingency off, the virtual printer ready.
// 2. Offline: the manager points the terminal at a port where nothing listens (the service is
//    unreachable for the terminal exactly as when the link is down), with the company's CSC
//    removed and a threshold of one failure. A sale waits: the bar shows the service offline
//    and why, the pending count and the oldest one's age ticking, and that the contingency
//    could not begin, and why.
// 3. Contingency: with the CSC back, the manager opens a period; the sale in doubt is issued
//    again offline and another one is sold offline, reaching the limit of two: the banner with
//    its start and count, and the block with its reason.
// 4. The printer: a network printer at a closed port shows its error; back to the virtual one,
//    ready again.
// 5. The 24-hour deadline after the period ended: a second store whose sandbox authority is
//    unavailable (POST /api/v1/sandbox/autoridade), holding a receipt its terminal issued in
//    contingency 22 h 30 min ago (written by the real terminal core run with its clock set back
//    that far, between two starts of the store: nobody waits a day in a test). The receipt
//    reaches the service and waits for the authority; the bar warns of the deadline, and still
//    does after the manager ends the period.
// 6. The PC's clock a day and two hours behind the service's (the sandbox clock moved ahead): the
//    bar says so, and how to fix it (electron/core/service-clock.ts).
// Screenshots of each state go to test-output/e2e/barra-*.png.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTerminal } from '../../electron/core/terminal.ts';
import { generateTestCertificate } from '../../fiscal/certificate.ts';
import { DEMO_CNPJ, DEMO_CSC, demoEmitter } from '../../fiscal/samples.ts';
import { closedPort, tempDataDir } from '../helpers/service-process.ts';
import { openSettings, outboxDump, screenshotOf, sellInCash, waitForText } from './checkout-helpers.ts';
import { launchChromium, openCheckout, startStore, type Store } from './harness.ts';

const HOURS_AGO = 22.5;

let browser: Browser;
const stores: Store[] = [];
let current: Store | undefined;

beforeAll(async () => {
  browser = await launchChromium();
});

afterEach((context) => {
  if (context.task.result?.state === 'fail' && current) {
    console.error(`--- balcao start ---\n${current.output.slice(-80).join('\n')}\n--- outbox ---\n${outboxDump(current)}`);
  }
});

afterAll(async () => {
  await browser?.close();
  for (const store of stores) expect((await store.stop()).code).toBe(0);
});

async function started(dataDir?: string): Promise<Store> {
  const store = await startStore(dataDir ? { dataDir } : {});
  expect(store.screen).toBe(true);
  stores.push(store);
  current = store;
  return store;
}

async function stopped(store: Store): Promise<void> {
  stores.splice(stores.indexOf(store), 1);
  expect((await store.stop()).code).toBe(0);
}

const statusBar = (page: Page): Locator => page.getByRole('banner', { name: 'Situação do terminal' });
/** One pill of the status bar, by the words it starts with. */
const pill = (page: Page, start: string | RegExp): Locator => statusBar(page).locator('span.pill').filter({ hasText: start });

async function save(settings: Locator, button: string): Promise<void> {
  await settings.getByRole('button', { name: button }).click();
  await waitForText(settings.getByRole('status'), 'Salvo.');
}

async function closeDialogs(page: Page): Promise<void> {
  await page.keyboard.press('Escape');
  await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
}

/** The age the queue pill shows for the oldest pending command, in seconds (only the "N s" form). */
async function oldestAgeSeconds(page: Page): Promise<number> {
  const text = (await pill(page, 'Fila:').textContent()) ?? '';
  const m = /mais antiga há (\d+) s\)/.exec(text);
  return m ? Number(m[1]) : -1;
}

describe('status bar', () => {
  it('online; offline with the pending sale and its age, and why contingency cannot begin; contingency with its banner and limit; the printer failing and back', async () => {
    const store = await started();
    const page = await openCheckout(browser, store.checkoutUrl);
    await page.getByLabel('Código ou nome do produto').waitFor();
    const bar = statusBar(page);

    // 1. Online, nothing waiting.
    await waitForText(pill(page, 'Serviço:'), 'Serviço: online');
    await waitForText(pill(page, 'Fila:'), 'Fila: nada pendente');
    await waitForText(pill(page, 'Contingência'), 'Contingência: inativa');
    await waitForText(pill(page, 'Impressora:'), 'Impressora: pronta (Impressora virtual)');
    expect(await bar.getByRole('alert').count()).toBe(0);
    await screenshotOf(page, 'barra-online');

    // 2. Offline, and the terminal cannot issue by itself (no CSC): it says so.
    let settings = await openSettings(page, store, 'Empresa');
    await settings.getByLabel('Identificador do CSC').fill('');
    await save(settings, 'Salvar empresa');
    await settings.getByRole('tab', { name: 'Contingência' }).click();
    await settings.getByLabel('Falhas seguidas para entrar em contingência').fill('1');
    await settings.getByLabel('Máximo de NFC-e em contingência').fill('2');
    await save(settings, 'Salvar limites');
    await settings.getByRole('tab', { name: 'Serviço' }).click();
    await settings.getByLabel('Endereço do serviço').fill(`http://127.0.0.1:${await closedPort()}`);
    await save(settings, 'Salvar serviço');
    await closeDialogs(page);

    await sellInCash(page, ['7891000053508'], '10,00', 'Pendente'); // Leite 5,29
    await waitForText(pill(page, 'Serviço:'), 'Serviço: offline — Serviço de emissão fora do ar (conexão recusada)');
    await waitForText(pill(page, 'Fila:'), /^Fila: 1 pendente \(mais antiga há \d+ s\)$/);
    // The age is the oldest command's, and it keeps counting while nothing can be sent.
    const age = await oldestAgeSeconds(page);
    await expect.poll(() => oldestAgeSeconds(page)).toBeGreaterThan(age);
    const cannotBegin = bar.getByRole('alert').filter({ hasText: 'a contingência offline não pode começar' });
    await waitForText(cannotBegin, 'Serviço de emissão fora do ar, e a contingência offline não pode começar: CSC da empresa não cadastrado neste terminal.');
    expect(await pill(page, 'Contingência').first().textContent()).toBe('Contingência: inativa');
    await screenshotOf(page, 'barra-offline');

    // 3. The CSC back (and the threshold out of the way, so the period is the manager's), the
    //    manager opens a period: the sale in doubt is issued again offline.
    await page.keyboard.press('Enter'); // "Nova venda"
    settings = await openSettings(page, store, 'Contingência');
    await settings.getByLabel('Falhas seguidas para entrar em contingência').fill('100');
    await save(settings, 'Salvar limites');
    await settings.getByRole('tab', { name: 'Empresa' }).click();
    await settings.getByLabel('Identificador do CSC').fill(DEMO_CSC.id);
    await settings.getByLabel(/^CSC/).fill(DEMO_CSC.token);
    await save(settings, 'Salvar empresa');
    await settings.getByRole('tab', { name: 'Contingência' }).click();
    await settings.getByLabel('Justificativa da contingência').fill('Link de internet da loja fora do ar');
    await settings.getByRole('button', { name: 'Entrar em contingência' }).click();
    await waitForText(settings, 'Situação: ativa');
    await closeDialogs(page);
    await waitForText(pill(page, 'Contingência ativa'), /^Contingência ativa desde \d{2}:\d{2}:\d{2} · 1 a transmitir$/);
    await expect.poll(() => cannotBegin.count()).toBe(0);

    // One more sale, offline: two wait, the limit is reached and selling stops, with the reason.
    await sellInCash(page, ['7896036090244'], '10,00', 'Pendente'); // Óleo 7,89
    await waitForText(pill(page, 'Contingência ativa'), /^Contingência ativa desde \d{2}:\d{2}:\d{2} · 2 a transmitir$/);
    await waitForText(
      bar.getByRole('alert').filter({ hasText: 'vendas bloqueadas' }),
      'Contingência: vendas bloqueadas — Limite de 2 NFC-e emitidas em contingência sem autorização atingido',
    );
    await waitForText(pill(page, 'Fila:'), /^Fila: 2 pendentes \(mais antiga há \d+ s\)$/);
    await waitForText(pill(page, 'Serviço:'), 'Serviço: offline');
    await screenshotOf(page, 'barra-contingencia');

    // 4. A network printer nobody answers at: its error; the virtual one again: ready.
    await page.keyboard.press('Enter'); // "Nova venda"
    const printerPort = await closedPort();
    settings = await openSettings(page, store, 'Impressora');
    await settings.getByLabel('Tipo de impressora').selectOption('Rede (TCP/IP)');
    await settings.getByLabel('Endereço da impressora (IP:porta, dispositivo ou arquivo)').fill(`127.0.0.1:${printerPort}`);
    await save(settings, 'Salvar impressora');
    await closeDialogs(page);
    const printerAlert = bar.getByRole('alert').filter({ hasText: 'Impressora:' });
    // The transport's own message (native/printer) names the printer; the bar does not repeat it.
    await waitForText(printerAlert, new RegExp(`^Impressora: .*\\(127\\.0\\.0\\.1:${printerPort}\\)`));
    expect((await printerAlert.textContent())!.split(`127.0.0.1:${printerPort}`)).toHaveLength(2);
    await screenshotOf(page, 'barra-impressora');

    settings = await openSettings(page, store, 'Impressora');
    await settings.getByLabel('Tipo de impressora').selectOption('Virtual (mostra na tela)');
    await save(settings, 'Salvar impressora');
    await closeDialogs(page);
    await waitForText(pill(page, 'Impressora:'), 'Impressora: pronta (Impressora virtual)');
  });

  it('the 24-hour deadline of a receipt issued offline 22 h 30 min ago, shown while the period is open and after the manager ends it; then the PC clock a day behind the service', async () => {
    // The store's A1 certificate was issued days ago, as real ones are (the demo one generated at
    // the first start would not yet be valid yesterday). `balcao start` keeps the one it finds.
    const dataDir = tempDataDir('balcao-e2e-');
    const { pfx, password } = generateTestCertificate({ cnpj: DEMO_CNPJ, xNome: demoEmitter().xNome, notBefore: new Date(Date.now() - 3 * 24 * 3_600_000) });
    const pfxFile = join(dataDir, 'certificado-demo.pfx');
    writeFileSync(pfxFile, pfx, { mode: 0o600 });
    writeFileSync(join(dataDir, 'certificado-demo.json'), JSON.stringify({ arquivo: pfxFile, password }), { mode: 0o600 });

    // A store whose authority stops answering, then stopped.
    let store = await started(dataDir);
    const res = await fetch(`${store.serviceUrl}/api/v1/sandbox/autoridade`, {
      method: 'POST',
      headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ disponivel: false }),
    });
    expect(res.status).toBe(200);
    await stopped(store);

    // Yesterday, at this terminal: a period opened by the manager and one sale issued in it.
    const offsetMs = HOURS_AGO * 3_600_000;
    const yesterday = await createTerminal({ dataDir: join(dataDir, 'terminal'), startWorker: false, clock: () => Date.now() - offsetMs });
    try {
      const manager = (await yesterday.listManagers()).find((m) => m.name === store.manager.name)!;
      const auth = { managerId: manager.id, pin: store.manager.pin };
      // The authority's silence must not open a period of its own while the test looks.
      await yesterday.updateSettings({ contingency: { failureThreshold: 100 } }, auth);
      await yesterday.enterContingency({ ...auth, justification: 'Link de internet da loja fora do ar' });
      if (!(await yesterday.cashSession())) await yesterday.openCashSession({ floatCents: 0, operator: 'Caixa de teste' });
      let sale = await yesterday.openSale();
      sale = await yesterday.addItem(sale.id, { code: '7891000053508' });
      await yesterday.addPayment(sale.id, { tPag: '01', amountCents: 1000 });
      expect(yesterday.finishSaleNow(sale.id).receipt).toMatchObject({ contingency: true, state: 'pending' });
    } finally {
      await yesterday.close();
    }

    // Today: the store again. The receipt reaches the service and waits for the authority.
    store = await started(dataDir);
    const page = await openCheckout(browser, store.checkoutUrl);
    await page.getByLabel('Código ou nome do produto').waitFor();
    const bar = statusBar(page);
    await waitForText(pill(page, 'Serviço:'), 'Serviço: online');
    await waitForText(pill(page, 'Fila:'), /^Fila: 1 pendente \(mais antiga há 22 h 3\d min\)$/);
    await waitForText(pill(page, 'Contingência ativa'), /^Contingência ativa desde \d{2}:\d{2}:\d{2} · 1 a transmitir$/);
    const deadline = bar.getByRole('alert').filter({ hasText: 'prazo de 24 horas' });
    const warning =
      /^Transmita a NFC-e emitida em contingência: o prazo de 24 horas da mais antiga vence em 1 h (2\d|30) min \(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}\)\.$/;
    await waitForText(deadline, warning);

    // The manager ends the period: nothing else changed for the receipt, nor for its deadline.
    const settings = await openSettings(page, store, 'Contingência');
    await settings.getByRole('button', { name: 'Sair da contingência' }).click();
    await waitForText(settings, 'Situação: inativa');
    await closeDialogs(page);
    await waitForText(pill(page, 'Contingência'), /^Contingência: inativa · 1 a transmitir$/);
    await waitForText(deadline, warning);
    expect(await pill(page, 'Contingência ativa').count()).toBe(0);
    await screenshotOf(page, 'barra-prazo');

    // 6. The service's clock 26 h ahead of this PC's: the next answer dates it, the bar says so.
    const moved = await fetch(`${store.serviceUrl}/api/v1/sandbox/relogio`, {
      method: 'POST',
      headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ avancar_minutos: 26 * 60 }),
    });
    expect(moved.status).toBe(200);
    await waitForText(
      bar.getByRole('alert').filter({ hasText: 'relógio' }),
      /^O relógio deste computador está 26 h atrasado em relação ao serviço de emissão\. Acerte a data e a hora do computador \(no Windows: Configurações → Hora e idioma → Definir hora automaticamente\)\./,
    );
    await screenshotOf(page, 'barra-relogio');
  });
});
