// The checkout end to end with the tax reform (IBS/CBS): the real `balcao start` and the built
// screen in headless Chromium, driven by visible labels.
//
// 1. The store becomes a regime-normal company (CRT 3): at the service with `balcao company
//    update --crt 3`, at the terminal in the manager's company form (with the IBS/CBS settings:
//    a CBS rate for 2027), and its catalog is imported with the IBS/CBS classification columns.
// 2. A sale of two items is authorized; the authorized XML carries IBSCBS on each item (the
//    product's classification, or the company default), IBSCBSTot and vNFTot.
// 3. A sale of R$ 10.500,00 asks for the consumer's CPF before it can finish; with it, it is
//    authorized and the XML names the consumer.

import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '../../fiscal/schema.ts';
import { firstText } from '../../fiscal/xml.ts';
import { runCli } from '../helpers/service-process.ts';
import { openSettings, outboxDump, rpc, scan, screenshotOf, sellInCash, terminalReceipt, totalPanel, waitForText } from './checkout-helpers.ts';
import { launchChromium, openCheckout, startStore, type Store } from './harness.ts';

let store: Store;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [store, browser] = await Promise.all([startStore(), launchChromium()]);
  expect(store.screen).toBe(true);
  page = await openCheckout(browser, store.checkoutUrl);
});

afterEach((context) => {
  if (context.task.result?.state === 'fail') console.error(`--- balcao start ---\n${store.output.slice(-80).join('\n')}\n--- outbox ---\n${outboxDump(store)}`);
});

afterAll(async () => {
  await browser?.close();
  if (store) expect((await store.stop()).code).toBe(0);
});

/** The authorized XML of a receipt (nfeProc), from the service. */
async function authorizedXml(nNF: number): Promise<string> {
  const { service_id } = terminalReceipt(store, nNF);
  const res = await fetch(`${store.serviceUrl}/api/v1/nfce/${service_id}/xml`, { headers: { authorization: `Bearer ${store.token}` } });
  expect(res.status).toBe(200);
  return res.text();
}

describe('checkout of a regime-normal store (IBS/CBS)', () => {
  it('the manager sets the company to CRT 3 with its IBS/CBS settings and imports the catalog with the classification columns', async () => {
    const update = await runCli(['company', 'update', '--data', join(store.dataDir, 'service'), '--empresa', store.companyId, '--crt', '3']);
    expect(update.code, update.stderr).toBe(0);
    expect(JSON.parse(update.stdout).crt).toBe(3);

    const settings = await openSettings(page, store, 'Empresa');
    await settings.getByLabel('Regime tributário (CRT)').selectOption({ label: '3 Regime normal' });
    const ibsCbs = settings.getByRole('group', { name: 'Reforma tributária (IBS/CBS)' });
    await expect.poll(() => ibsCbs.getByLabel('CST do IBS/CBS padrão').inputValue()).toBe('000');
    expect(await ibsCbs.getByLabel('Classificação tributária (cClassTrib) padrão').inputValue()).toBe('000001');
    await ibsCbs.getByRole('button', { name: 'Adicionar período' }).click();
    await ibsCbs.getByLabel('Início do período 1').fill('2027-01-01');
    await ibsCbs.getByLabel('Fim do período 1').fill('2027-12-31');
    await ibsCbs.getByLabel('CBS (%) no período 1').fill('8,80');
    await settings.getByRole('button', { name: 'Salvar empresa' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');
    await ibsCbs.scrollIntoViewIfNeeded();
    await screenshotOf(page, 'empresa-ibscbs');
    const saved = await rpc<{ company: { crt: number; ibsCbs: unknown } }>(store, 'getSettings', []);
    expect(saved.company.crt).toBe(3);
    expect(saved.company.ibsCbs).toEqual({
      optIn: false,
      defaultClassification: { CST: '000', cClassTrib: '000001' },
      rates: [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.80' }],
    });

    await settings.getByRole('tab', { name: 'Catálogo' }).click();
    const csv = [
      'codigo;gtin;descricao;ncm;cfop;unidade;preco;grupo_tributario;cst_ibs_cbs;cclasstrib',
      '5001;;Café especial 250g;09012100;5102;UN;32,50;ISENTO40;;',
      '5002;;Arroz tipo 1 5kg;10063021;5102;UN;27,45;ISENTO40;200;200003',
      '5003;;Televisor 55 polegadas;85287200;5102;UN;3500,00;ISENTO40;000;000001',
    ].join('\n');
    await settings.getByLabel('Arquivo do catálogo (.csv)').setInputFiles({ name: 'catalogo.csv', mimeType: 'text/csv', buffer: Buffer.from(csv, 'utf8') });
    await settings.getByRole('button', { name: 'Importar catálogo' }).click();
    await waitForText(settings, /Importados: 3 · atualizados: 0 · rejeitados: 0/);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('sells two items; the authorized XML carries IBSCBS on each item, IBSCBSTot and vNFTot', async () => {
    const nNF = await sellInCash(page, ['5001', '5002'], '100,00');
    const xml = await authorizedXml(nNF);
    expect(validateXml(xml, 'procNFe')).toEqual({ valid: true, errors: [] });
    expect(firstText(xml, 'CRT')).toBe('3');
    const groups = [...xml.matchAll(/<IBSCBS>.*?<\/IBSCBS>/g)].map((m) => m[0]);
    expect(groups).toHaveLength(2);
    // Café: the company default, fully taxed at the 2026 rates.
    expect(['CST', 'cClassTrib', 'vBC', 'pIBSUF', 'vIBSUF', 'pIBSMun', 'pCBS', 'vCBS'].map((n) => firstText(groups[0]!, n))).toEqual([
      '000',
      '000001',
      '32.50',
      '0.10',
      '0.03',
      '0.00',
      '0.90',
      '0.29',
    ]);
    // Arroz: its own classification, cesta básica (100 % less).
    expect(['CST', 'cClassTrib', 'pRedAliq', 'pAliqEfet', 'vIBS', 'vCBS'].map((n) => firstText(groups[1]!, n))).toEqual([
      '200',
      '200003',
      '100.00',
      '0.00',
      '0.00',
      '0.00',
    ]);
    const tot = /<IBSCBSTot>.*?<\/IBSCBSTot>/.exec(xml)![0];
    expect([firstText(tot, 'vBCIBSCBS'), firstText(tot, 'vIBS'), firstText(tot, 'vCBS')]).toEqual(['59.95', '0.03', '0.29']);
    expect(firstText(xml, 'vNFTot')).toBe('59.95');
    expect(firstText(xml, 'cStat')).toBe('100');
  });

  it('a sale of R$ 10.500,00 asks for the consumer document before it can finish; with the CPF it is authorized', async () => {
    await scan(page, '3*5003');
    await waitForText(page.getByRole('table'), 'Televisor 55 polegadas');
    await waitForText(totalPanel(page), 'R$\u00a010.500,00');
    await page.keyboard.press('F2');
    const payment = page.getByRole('dialog', { name: 'Pagamento' });
    const required = payment.getByRole('form', { name: 'Consumidor obrigatório' });
    await waitForText(required.getByRole('alert'), 'Venda acima de R$\u00a010.000,00: a NFC-e exige o CPF ou o CNPJ do consumidor');
    await payment.getByLabel('Valor recebido').fill('10500,00');
    await page.keyboard.press('Enter');
    const finish = payment.getByRole('button', { name: /Finalizar venda/ });
    // Paid, but not finishable without the document; the cursor waits in its field.
    await expect.poll(() => finish.isDisabled()).toBe(true);
    const doc = required.getByLabel('CPF ou CNPJ do consumidor');
    await expect.poll(() => doc.evaluate((el) => el === document.activeElement)).toBe(true);
    await screenshotOf(page, 'consumidor-obrigatorio');
    await doc.fill('529.982.247-25');
    await required.getByRole('button', { name: 'Informar consumidor' }).click();
    await expect.poll(() => required.count()).toBe(0);
    await expect.poll(() => finish.isEnabled()).toBe(true);
    await finish.click();
    const panel = page.getByRole('region', { name: 'Venda concluída' });
    await waitForText(panel.getByRole('status'), 'Autorizada');
    const nNF = Number(/NFC-e nº (\d+)/.exec((await panel.textContent()) ?? '')?.[1]);
    const xml = await authorizedXml(nNF);
    expect(firstText(xml, 'CPF')).toBe('52998224725');
    expect(firstText(/<ICMSTot>.*?<\/ICMSTot>/.exec(xml)![0], 'vNF')).toBe('10500.00');
    expect(firstText(xml, 'vNFTot')).toBe('10500.00');
  });
});
