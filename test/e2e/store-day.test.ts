// A store's day at the checkout, end to end in headless Chromium over the real `balcao start`,
// driven by the labels a cashier and a manager read:
//
// 1. The till: the sale's commands off while it is closed; opened with R$ 100,00; a sale in cash;
//    through "Caixa", a sangria of R$ 60,00 (above the R$ 50,00 the manager set: a wrong PIN is
//    refused, the right one goes) and a suprimento of R$ 20,00 (below: no PIN); then a sale by
//    debit card, a method the session had not seen (to a consumer company and through an acquirer
//    whose CNPJs have letters: lower case and a wrong check digit are refused on screen naming
//    the field, and the receipt carries and prints both); the closing, without a reload, with a count
//    R$ 1,00 short. The closing screen shows expected, counted and the difference, and the report
//    the virtual printer got (with its picture, listed among the recent prints) is read back with
//    the ESC/POS decoder (test/escpos-decoder.ts) with the same three figures; "Concluir" leaves
//    the counter asking for the till.
// 2. After the closing, the manager cancels the cash sale: the next till, once opened, hands its
//    cash back by itself (a sangria with its reason). The authority stops answering: a sale sent
//    online stalls, the terminal goes into contingency by itself and issues it again offline; once
//    the authority is back the period ends with the first authorization, and the first attempt,
//    authorized after all, is cancelled by substitution and listed under its contingency receipt.
//    The manager's report of the day (totals, the chart, the products by the catalog's names, both
//    kinds of cancellation), its CSV and the accountant's ZIP, handed over as downloads in browser
//    mode, account for every cancelled NFC-e alike, line by line.
// 3. Two checkouts, one service: another checkout of the company holds series 2 (registered at
//    the service under its own id); choosing series 2 here is refused on screen, naming it, and
//    nothing changes; series 3 is claimed and saved.

import { existsSync, readFileSync } from 'node:fs';
import { generateCnpj } from '@brazilian-utils/brazilian-utils/generate-cnpj';
import { parse } from 'csv-parse/sync';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCnpj } from '../../base/common/tax-ids.ts';
import {
  consumerAfterRefusal,
  lastPrintedJob,
  openSettings,
  printerJobs,
  rpc,
  scan,
  screenshotOf,
  sellInCash,
  serviceXml,
  terminalReceipt,
  waitForText,
} from './checkout-helpers.ts';
import { launchChromium, openCheckout, startStore, type Store } from './harness.ts';
import { readZip } from '../helpers/zip.ts';

let store: Store;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [store, browser] = await Promise.all([startStore({ openTill: false }), launchChromium()]);
  page = await openCheckout(browser, store.checkoutUrl);
});

afterAll(async () => {
  await browser?.close();
  if (store) expect((await store.stop()).code).toBe(0);
});

const closeDialogs = async () => {
  while ((await page.getByRole('dialog').count()) > 0) await page.keyboard.press('Escape');
};

/** With the till closed: the sale's commands are off (F2 does nothing), the receipts and the manager's are on. */
async function expectCommandsForClosedTill(): Promise<void> {
  const commands = page.getByRole('navigation', { name: 'Comandos do caixa' });
  const enabled = async (name: string) => commands.getByRole('button', { name }).isEnabled();
  await expect.poll(() => enabled('F2 Pagamento')).toBe(false);
  expect(await enabled('F3 Quantidade')).toBe(false);
  expect(await enabled('F4 Consumidor')).toBe(false);
  expect(await enabled('F8 Cancelar venda')).toBe(false);
  expect(await enabled('F9 Recibos')).toBe(true);
  expect(await enabled('F10 Gerente')).toBe(true);
  expect(await enabled('Caixa')).toBe(true);
}

/** The sandbox authority of the demo company answers, or not (service/http/sandbox-routes.ts). */
async function authority(disponivel: boolean): Promise<void> {
  const res = await fetch(`${store.serviceUrl}/api/v1/sandbox/autoridade`, {
    method: 'POST',
    headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ disponivel }),
  });
  expect(res.status).toBe(200);
}

const contingencyPill = (): Locator =>
  page
    .getByRole('banner', { name: 'Situação do terminal' })
    .locator('span.pill')
    .filter({ hasText: /^Contingência/ });

/** A CSV as the spreadsheet reads it (";", a BOM first), as records. */
const readCsv = (bytes: Buffer): Record<string, string>[] =>
  parse(bytes.toString('utf8').replace(/^\uFEFF/, ''), { delimiter: ';', columns: true }) as Record<string, string>[];

/** The lines of the last job the virtual printer wrote, as the printer reads them. */
const lastPrintedLines = (): string[] => lastPrintedJob(store).lines.map((l) => l.text.trimEnd());

describe("a store's day", () => {
  it('opens the till with R$ 100,00, sells in cash, records a sangria behind the PIN and a suprimento, sells by card, and closes R$ 1,00 short: screen and printed report agree', async () => {
    // The till is closed: the counter asks for it to be opened first, and only what can be done
    // looks usable (no sale: no payment, quantity or consumer; the receipts and the manager yes).
    const closed = page.getByRole('region', { name: 'Caixa fechado' });
    await closed.waitFor();
    await expectCommandsForClosedTill();
    await closed.getByLabel('Operador(a)').fill('Maria');
    await closed.getByLabel('Troco inicial').fill('100,00');
    await closed.getByRole('button', { name: 'Abrir caixa' }).click();
    await page.getByLabel('Código ou nome do produto').waitFor();

    // The manager lets movements up to R$ 50,00 go without a PIN.
    const settings = await openSettings(page, store, 'Caixa');
    await settings.getByLabel('Sangria e suprimento acima de (R$) pedem o PIN do gerente').fill('50,00');
    await settings.getByRole('button', { name: 'Salvar caixa' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');
    await closeDialogs();

    // In cash: Leite 5,29 paid with 10,00 (4,71 change).
    await sellInCash(page, ['7891000053508'], '10,00');
    await page.keyboard.press('Enter');

    // Mid-session, through "Caixa": a sangria of 60,00, above the limit, so the manager's PIN
    // (a wrong one is refused).
    await page.getByRole('button', { name: 'Caixa', exact: true }).click();
    const till = page.getByRole('dialog', { name: 'Caixa' });
    await till.getByRole('button', { name: 'Sangria' }).click();
    await till.getByLabel('Valor').fill('60,00');
    await till.getByLabel('Motivo').fill('Depósito no banco');
    await till.getByLabel('PIN do gerente').fill('0000');
    await till.getByRole('button', { name: 'Registrar sangria' }).click();
    await waitForText(till.getByRole('alert'), 'PIN incorreto');
    await till.getByLabel('PIN do gerente').fill(store.manager.pin);
    await till.getByRole('button', { name: 'Registrar sangria' }).click();
    await waitForText(till.getByRole('status'), 'Sangria de R$\u00a060,00 registrada.');
    await waitForText(till.getByRole('table'), `autorizado por ${store.manager.name}`);

    // A suprimento of 20,00: below the limit, no PIN asked.
    await till.getByRole('button', { name: 'Suprimento' }).click();
    await till.getByLabel('Valor').fill('20,00');
    expect(await till.getByLabel('PIN do gerente').count()).toBe(0);
    await till.getByLabel('Motivo').fill('Troco extra');
    await till.getByRole('button', { name: 'Registrar suprimento' }).click();
    await waitForText(till.getByRole('status'), 'Suprimento de R$\u00a020,00 registrado.');
    await screenshotOf(page, 'caixa-movimentos');
    await closeDialogs();

    // Then a method the session had not seen: Café 18,90 by debit card on a card machine, for a
    // company whose CNPJ has letters (the numeric store's consumer), through an acquirer whose
    // CNPJ the generator drew with letters. Its receipt stays on screen while the till is closed.
    await scan(page, '7891000100103');
    await expect.poll(() => page.getByRole('table').locator('tbody tr').count()).toBe(1);
    await consumerAfterRefusal(page, {
      wrong: '12.abc.345/01de-35',
      refusal: 'CPF/CNPJ do consumidor: CNPJ deve usar letras maiúsculas',
      right: '12.ABC.345/01DE-35',
      shown: 'Consumidor: CNPJ 12.ABC.345/01DE-35',
    });
    await page.keyboard.press('F2');
    const payment = page.getByRole('dialog', { name: 'Pagamento' });
    await payment.getByRole('radio', { name: 'Cartão de débito' }).check();
    await payment.getByRole('radio', { name: 'Maquininha não integrada' }).check();
    const acquirer = generateCnpj({ version: 2 });
    await payment.getByLabel(/CNPJ da credenciadora/).fill(formatCnpj(acquirer.slice(0, 13) + ((Number(acquirer[13]) + 1) % 10)));
    await payment.getByRole('button', { name: /Adicionar pagamento/ }).click();
    await waitForText(payment.getByRole('alert'), 'CNPJ da credenciadora: CNPJ inválido (dígito verificador não confere)');
    await payment.getByLabel(/CNPJ da credenciadora/).fill(formatCnpj(acquirer));
    await payment.getByRole('button', { name: /Adicionar pagamento/ }).click();
    await waitForText(payment, /Falta\s*R\$\u00a00,00/);
    await payment.getByRole('button', { name: /Finalizar venda/ }).click();
    const done = page.getByRole('region', { name: 'Venda concluída' });
    await waitForText(done.getByRole('status'), 'Autorizada');
    const nNF = Number(/NFC-e nº (\d+)/.exec((await done.textContent()) ?? '')?.[1]);
    const xml = await serviceXml(store, 'nfce', terminalReceipt(store, nNF).service_id!);
    expect(xml, acquirer).toContain('<dest><CNPJ>12ABC34501DE35</CNPJ>');
    expect(xml, acquirer).toContain(`<card><tpIntegra>2</tpIntegra><CNPJ>${acquirer}</CNPJ>`);
    await expect.poll(() => lastPrintedLines().join('\n')).toContain('CONSUMIDOR - CNPJ 12.ABC.345/01DE-35');

    // The closing, counted blind, without reloading the page: the form asks for the debit card
    // too. 100,00 + 10,00 − 4,71 − 60,00 + 20,00 = 65,29 expected in cash; 64,29 counted. The
    // card slips: 18,90.
    await page.getByRole('button', { name: 'Caixa', exact: true }).click();
    await till.getByRole('button', { name: 'Fechar caixa' }).click();
    await till.getByLabel('Contado em Dinheiro').fill('64,29');
    await till.getByLabel('Contado em Cartão de Débito').fill('18,90');
    await till.getByRole('button', { name: 'Fechar caixa' }).click();

    const table = till.getByRole('table', { name: 'Fechamento por forma de pagamento' });
    await table.waitFor();
    const cells = async (name: string) =>
      (
        await table
          .getByRole('row', { name: new RegExp(`^${name}`) })
          .getByRole('cell')
          .allTextContents()
      ).map((t) => t.trim());
    expect(await cells('Dinheiro')).toEqual(['R$\u00a065,29', 'R$\u00a064,29', '-R$\u00a01,00']);
    expect(await cells('Cartão de Débito')).toEqual(['R$\u00a018,90', 'R$\u00a018,90', 'R$\u00a00,00']);
    expect((await cells('Diferença total')).at(-1)).toBe('-R$\u00a01,00');
    await waitForText(till.getByRole('status'), 'Relatório impresso.');
    await screenshotOf(page, 'caixa-fechamento');

    // The report as the printer got it: the same expected, counted and difference; the virtual
    // printer keeps its picture beside it, as it does for every job, and the screen lists it.
    const lines = lastPrintedLines();
    expect(lines.some((l) => l.includes('FECHAMENTO DE CAIXA'))).toBe(true);
    const cash = lines.slice(lines.indexOf('DINHEIRO'));
    expect(cash.find((l) => l.startsWith('Troco inicial'))).toMatch(/R\$ 100,00$/);
    expect(cash.find((l) => l.startsWith('Esperado'))).toMatch(/R\$ 65,29$/);
    expect(cash.find((l) => l.startsWith('Contado'))).toMatch(/R\$ 64,29$/);
    expect(cash.find((l) => l.startsWith('Diferença'))).toMatch(/-R\$ 1,00$/);
    const card = lines.slice(lines.indexOf('CARTÃO DE DÉBITO'));
    expect(card.slice(0, 4).find((l) => l.startsWith('Esperado'))).toMatch(/R\$ 18,90$/);
    expect(lines.find((l) => l.startsWith('DIFERENÇA TOTAL'))).toMatch(/-R\$ 1,00$/);
    expect(lines.some((l) => /Sangria: Depósito no banco +-R\$ 60,00$/.test(l))).toBe(true);
    const lastJob = printerJobs(store).sort().at(-1)!;
    expect(existsSync(join(store.printerDir, lastJob.replace(/\.bin$/, '.png')))).toBe(true);
    await waitForText(page.getByRole('region', { name: 'Impressões recentes' }).getByRole('listitem').first(), /^Fechamento do caixa nº 1/);

    // Done: the counter asks for the till again; the last sale's receipt is gone with the session.
    await till.getByRole('button', { name: 'Concluir' }).click();
    await page.getByRole('region', { name: 'Caixa fechado' }).waitFor();
    expect(await page.getByRole('region', { name: 'Venda concluída' }).count()).toBe(0);
    await expectCommandsForClosedTill();
  });

  it('cancels a sale of the closed till (the next till hands its cash back by itself), rides out an outage of the authority, and accounts for every cancellation alike in the report, its CSV and the accountant’s ZIP', async () => {
    // With the till closed, the manager cancels the cash sale (Leite, 5,29 kept after the change).
    await page.keyboard.press('F9');
    let receipts = page.getByRole('dialog', { name: 'Recibos recentes' });
    await receipts.getByRole('row', { name: 'NFC-e nº 1' }).getByRole('button', { name: 'Cancelar NFC-e' }).click();
    const cancel = page.getByRole('dialog', { name: 'Cancelar NFC-e' });
    await cancel.getByLabel('PIN do gerente').fill(store.manager.pin);
    await cancel.getByLabel('Justificativa do cancelamento').fill('Cliente desistiu da compra no caixa');
    await cancel.getByRole('button', { name: 'Confirmar cancelamento' }).click();
    await waitForText(cancel.getByRole('status'), 'NFC-e cancelada.', 30_000);
    await closeDialogs();

    // The next till hands that money back: a sangria with its reason, recorded at the opening.
    const closed = page.getByRole('region', { name: 'Caixa fechado' });
    await closed.getByLabel('Operador(a)').fill('João');
    await closed.getByLabel('Troco inicial').fill('50,00');
    await closed.getByRole('button', { name: 'Abrir caixa' }).click();
    await page.getByLabel('Código ou nome do produto').waitFor();
    await page.getByRole('button', { name: 'Caixa', exact: true }).click();
    const till = page.getByRole('dialog', { name: 'Caixa' });
    await waitForText(
      till.getByRole('row', { name: /Devolução em dinheiro: NFC-e nº 1 \(série 1\) do caixa nº 1 cancelada após o fechamento/ }),
      `autorizado por ${store.manager.name}-R$\u00a05,29`,
    );
    await waitForText(till, /Sangrias\s*R\$\u00a05,29/);
    await screenshotOf(page, 'caixa-devolucao');
    await closeDialogs();

    // The authority stops answering: Óleo (7,89) paid with 10,00 goes out online as nº 3 and
    // stalls there; the terminal goes into contingency by itself and issues the sale again
    // offline, as nº 4.
    await authority(false);
    await scan(page, '7896036090244');
    await expect.poll(() => page.getByRole('table').locator('tbody tr').count()).toBe(1);
    await page.keyboard.press('F2');
    const payment = page.getByRole('dialog', { name: 'Pagamento' });
    await payment.getByLabel('Valor recebido').fill('10,00');
    await page.keyboard.press('Enter');
    await payment.getByRole('button', { name: /Finalizar venda/ }).click();
    const sold = page.getByRole('region', { name: 'Venda concluída' });
    await waitForText(sold, 'Emitida em contingência offline', 60_000);
    await waitForText(sold, 'NFC-e nº 4');
    await waitForText(contingencyPill(), /^Contingência ativa desde \d{2}:\d{2}:\d{2} · 1 a transmitir$/);
    await page.keyboard.press('Enter');

    // It answers again: nº 4 is authorized and the period ends with it; nº 3, authorized after
    // all, is cancelled by substitution, and the receipts list shows it under nº 4.
    await authority(true);
    await waitForText(contingencyPill(), 'Contingência: inativa', 60_000);
    await page.keyboard.press('F9');
    receipts = page.getByRole('dialog', { name: 'Recibos recentes' });
    await waitForText(receipts.getByRole('row', { name: 'NFC-e nº 3' }), 'Cancelada por substituição', 60_000);
    await waitForText(receipts.getByRole('row', { name: 'NFC-e nº 3' }), 'Venda emitida de novo em contingência na NFC-e nº 4 (série 1)');
    await waitForText(receipts.getByRole('row', { name: 'NFC-e nº 4' }), 'Autorizada');
    await screenshotOf(page, 'recibos-substituicao');
    await closeDialogs();

    // The day's report: Café by debit card (18,90) and Óleo in contingency (7,89) stand.
    const settings = await openSettings(page, store, 'Relatórios');
    await settings.getByRole('button', { name: 'Gerar relatório' }).click();
    const report = settings.getByRole('region', { name: 'Relatório de vendas' });
    await waitForText(report, /Vendas\s*2/);
    await waitForText(report, /Total\s*R\$\u00a026,79/);
    const rowCells = async (table: Locator) =>
      Promise.all((await table.locator('tbody tr').all()).map(async (row) => (await row.locator('th, td').allTextContents()).map((t) => t.trim())));
    expect(await rowCells(report.getByRole('table', { name: 'Por forma de pagamento' }))).toEqual([
      ['Dinheiro', '1', 'R$\u00a010,00'],
      ['Cartão de Débito', '1', 'R$\u00a018,90'],
    ]);
    // The chart names its bars; its text alternative sums the day.
    const chart = report.getByRole('img', { name: /^Vendas por hora: (\d+h R\$\s[\d,]+ em \d venda\(s\)(, )?)+$/ });
    await chart.waitFor();
    // In homologação the receipts' first xProd is the mandatory text: the products go by the catalog's names.
    expect(await rowCells(report.getByRole('table', { name: 'Por produto' }))).toEqual([
      ['1001', 'Café torrado e moído 500g', '1 UN', 'R$\u00a018,90'],
      ['1008', 'Óleo de soja 900ml', '1 UN', 'R$\u00a07,89'],
    ]);
    const onScreen = await rowCells(report.getByRole('table', { name: 'Canceladas (fora do total)' }));
    expect(onScreen).toEqual([
      ['NFC-e nº 1 (série 1)', 'cancelamento (evento 110111)', 'R$\u00a05,29'],
      ['NFC-e nº 3 (série 1)', 'por substituição (evento 110112), pela NFC-e nº 4 (série 1)', 'R$\u00a07,89'],
    ]);
    await screenshotOf(page, 'relatorio');

    const [csvDownload] = await Promise.all([page.waitForEvent('download'), settings.getByRole('button', { name: 'Baixar CSV' }).click()]);
    expect(csvDownload.suggestedFilename()).toMatch(/^vendas-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = readCsv(readFileSync(await csvDownload.path()));
    expect(csv.find((r) => r.secao === 'total' && r.item === 'vendas')).toMatchObject({ quantidade: '2', valor: '26,79' });

    await settings.getByRole('tab', { name: 'Exportação' }).click();
    const [zipDownload] = await Promise.all([page.waitForEvent('download'), settings.getByRole('button', { name: 'Exportar' }).click()]);
    expect(zipDownload.suggestedFilename()).toMatch(/^nfce-\d{14}-\d{4}-\d{2}-01-a-\d{4}-\d{2}-\d{2}\.zip$/);
    await waitForText(settings.getByRole('status'), 'enviado para os downloads do navegador');
    const entries = await readZip(readFileSync(await zipDownload.path()));
    expect([...entries.keys()].filter((n) => n.endsWith('-nfce.xml'))).toHaveLength(4);
    const summary = readCsv(entries.get('resumo.csv')!);

    // Every cancelled NFC-e of the ZIP, line by line: on screen, in the CSV, in the summary,
    // with the kind its event file says.
    const eventOf = new Map(summary.filter((r) => r.documento!.startsWith('evento_')).map((r) => [r.chave, r.documento!.slice('evento_'.length)]));
    const inZip = summary
      .filter((r) => r.documento === 'nfce' && r.situacao === 'cancelada')
      .sort((a, b) => Number(a.numero) - Number(b.numero))
      .map((r) => [`${r.serie}-${r.numero}`, eventOf.get(r.chave!), r.chave, r.valor_total]);
    expect(inZip.map(([n, event]) => [n, event])).toEqual([
      ['1-1', '110111'],
      ['1-3', '110112'],
    ]);
    const kind = { cancelada: '110111', cancelada_substituicao: '110112' } as Record<string, string>;
    expect(csv.filter((r) => r.secao!.startsWith('cancelada')).map((r) => [r.item, kind[r.secao!], r.descricao, r.valor])).toEqual(inZip);
    expect(onScreen.map(([n, how, value]) => [n, how, value])).toEqual(
      inZip.map(([n, event, , value]) => [
        `NFC-e nº ${n!.split('-')[1]} (série ${n!.split('-')[0]})`,
        event === '110112' ? expect.stringMatching(/^por substituição \(evento 110112\)/) : 'cancelamento (evento 110111)',
        `R$\u00a0${value}`,
      ]),
    );
    await closeDialogs();
  });

  it('refuses on screen a series another checkout of the company uses, and claims a free one', async () => {
    // Checkout 2 of the same company, on the same service, holds series 2.
    const other = await fetch(`${store.serviceUrl}/api/v1/terminais/caixa-2-da-loja`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ nome: 'Caixa 2', series: [2] }),
    });
    expect(other.status).toBe(200);

    const settings = await openSettings(page, store, 'Serviço');
    await settings.getByLabel('Série da NFC-e').fill('2');
    await settings.getByRole('button', { name: 'Salvar serviço' }).click();
    await waitForText(settings.getByRole('alert'), 'A série 2 já é usada por outro caixa desta empresa (Caixa 2): escolha outra série para este caixa');
    await screenshotOf(page, 'serie-recusada');
    expect(await rpc<{ series: number }>(store, 'getSettings', [])).toMatchObject({ series: 1 });

    await settings.getByLabel('Nome deste caixa').fill('Caixa 1');
    await settings.getByLabel('Série da NFC-e').fill('3');
    await settings.getByRole('button', { name: 'Salvar serviço' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');
    const mine = await rpc<{ series: number; terminal: { id: string } }>(store, 'getSettings', []);
    expect(mine.series).toBe(3);
    const registry = (await (await fetch(`${store.serviceUrl}/api/v1/terminais`, { headers: { authorization: `Bearer ${store.token}` } })).json()) as {
      data: { terminal: string; nome: string; series: number[] }[];
    };
    expect(registry.data.map((t) => [t.terminal, t.nome, t.series])).toEqual([
      [mine.terminal.id, 'Caixa 1', [3]],
      ['caixa-2-da-loja', 'Caixa 2', [2]],
    ]);
    await closeDialogs();
  });
});
