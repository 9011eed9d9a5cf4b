// The manager's side of the checkout screen, end to end in headless Chromium over the real
// `balcao start`:
//
// 1. A receipt past its cancellation window can no longer be cancelled: the screen says why
//    ("Prazo de cancelamento (30 minutos) encerrado") and offers the return (Devolução). Only
//    the service's sandbox clock moves (POST /api/v1/sandbox/relogio, 31 minutes): the terminal
//    follows the service's clock through the Date of its answers (electron/core/service-clock.ts),
//    here those of the next sale, and judges the window on it.
// 2. Catalog import behind the manager's PIN, with the rejected rows shown line by line, and the
//    imported product sold right after.
// 3. Offline contingency: a receipt issued offline and refused by the service (the terminal held
//    another company's token) is listed among the contingency's open tasks; once the manager
//    fixes the token, "Reenviar" sends it again and it is authorized.

import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceSandboxClock, openSettings, rpc, scan, screenshotOf, sellInCash, terminalReceipt, totalPanel, waitForText } from './checkout-helpers.ts';
import { createCompany } from '../helpers/service-process.ts';
import { launchChromium, openCheckout, startStore, type Store } from './harness.ts';

let store: Store;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [store, browser] = await Promise.all([startStore(), launchChromium()]);
  page = await openCheckout(browser, store.checkoutUrl);
});

afterAll(async () => {
  await browser?.close();
  if (store) expect((await store.stop()).code).toBe(0);
});

describe('manager screens', () => {
  it('refuses to cancel a receipt authorized 31 minutes ago, says why and offers the return', async () => {
    await page.getByLabel('Código ou nome do produto').waitFor();
    const nNF = await sellInCash(page, ['7891000053508', '7896036090244'], '20,00'); // Leite 5,29 + Óleo 7,89
    expect(terminalReceipt(store, nNF).state).toBe('authorized');
    await advanceSandboxClock(store, 31);
    await page.keyboard.press('Enter'); // "Nova venda"
    // The store goes on selling; this sale is authorized on the service's moved clock.
    const next = await sellInCash(page, ['7891000053508'], '10,00');
    await page.keyboard.press('Enter');

    await page.keyboard.press('F9');
    const receipts = page.getByRole('dialog', { name: 'Recibos recentes' });
    const row = receipts.getByRole('row', { name: `NFC-e nº ${nNF}` });
    await waitForText(row, 'Prazo de cancelamento (30 minutos) encerrado');
    expect(await row.getByRole('button', { name: 'Cancelar NFC-e' }).count()).toBe(0);
    // The sale made after the clock moved is still inside its window.
    await receipts
      .getByRole('row', { name: `NFC-e nº ${next}` })
      .getByRole('button', { name: 'Cancelar NFC-e' })
      .waitFor();
    await row.getByRole('button', { name: 'Devolução' }).click();

    const dialog = page.getByRole('dialog', { name: 'Devolução' });
    await waitForText(dialog, 'Leite integral 1L');
    // Only the milk comes back; the receipt named no consumer, so the screen asks who returns it.
    await dialog.getByRole('checkbox', { name: /Óleo de soja 900ml/ }).uncheck();
    await dialog.getByLabel('Motivo da devolução').fill('Produto com embalagem violada');
    await dialog.getByLabel('PIN do gerente').fill(store.manager.pin);
    const submit = dialog.getByRole('button', { name: 'Emitir devolução' });
    await submit.click();
    await waitForText(dialog.getByRole('alert'), 'CPF/CNPJ de quem devolve: informe o documento');
    await dialog.getByLabel('CPF/CNPJ de quem devolve').fill('529.982.247-25');
    await dialog.getByLabel('Nome de quem devolve').fill('Maria da Silva');
    await screenshotOf(page, 'devolucao');
    await submit.click();
    // Only the milk (R$ 5,29) comes back, in an NF-e de devolução the sandbox authorizes.
    const outcome = dialog.getByRole('status');
    await waitForText(outcome, /NF-e de devolução nº \d+ \(R\$\u00a05,29\)/);
    await waitForText(outcome, 'Autorizada');
    await screenshotOf(page, 'devolucao-enviada');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('imports a catalog CSV behind the PIN, lists the rejected rows, and the new product sells', async () => {
    const settings = await openSettings(page, store, 'Catálogo');

    const csv = [
      'codigo;gtin;descricao;ncm;cfop;unidade;preco;grupo_tributario',
      '2001;7894900530001;Água mineral 500ml;22011000;5102;UN;2,50;SN102',
      '2002;7894900530002;Água com gás 500ml;22011000;5102;UN;3,10;SN102',
      '2003;;Pão de queijo;19059020;5102;KG;-1;SN102',
    ].join('\n');
    await settings.getByLabel('Arquivo do catálogo (.csv)').setInputFiles({ name: 'catalogo.csv', mimeType: 'text/csv', buffer: Buffer.from(csv, 'utf8') });
    await settings.getByRole('button', { name: 'Importar catálogo' }).click();
    await waitForText(settings, /Importados: 1 · atualizados: 0 · rejeitados: 2/);
    const rejected = settings.getByRole('table', { name: 'Linhas rejeitadas' });
    const rows = rejected.getByRole('row');
    await expect.poll(() => rows.count()).toBe(3); // header + 2
    expect(await rows.nth(1).textContent()).toMatch(/^3\s*2002\s*gtin/);
    expect(await rows.nth(2).textContent()).toMatch(/^4\s*2003\s*preco/);
    await rejected.scrollIntoViewIfNeeded();
    await screenshotOf(page, 'catalogo');

    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await scan(page, '2*7894900530001');
    await waitForText(page.getByRole('table'), 'Água mineral 500ml');
    await waitForText(totalPanel(page), 'R$\u00a05,00');
    await page.keyboard.press('F8');
    await page.getByRole('dialog', { name: 'Cancelar venda' }).getByRole('button', { name: 'Descartar venda' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('imports the IBPT table behind the PIN: names a bad line, lists the products outside it, and the receipt carries its rates and source', async () => {
    // A table in IBPT's layout (Windows-1252, CRLF) valid around today, whatever day the test runs.
    const ddmmyyyy = (d: Date) => d.toISOString().slice(0, 10).split('-').reverse().join('/');
    const [from, until] = [ddmmyyyy(new Date(Date.now() - 20 * 86_400_000)), ddmmyyyy(new Date(Date.now() + 60 * 86_400_000))];
    const table = (rate: string) =>
      Buffer.from(
        [
          'codigo;ex;tipo;descricao;nacionalfederal;importadosfederal;estadual;municipal;vigenciainicio;vigenciafim;chave;versao;fonte',
          `09012100;;0;"Café torrado, não descafeinado";13.45;16.50;18.00;0.00;${from};${until};B1A2C3;26.2.A;IBPT`,
          `17019900;;0;"Outros açúcares de cana";${rate};12.00;7.00;0.00;${from};${until};B1A2C3;26.2.A;IBPT`,
        ].join('\r\n'),
        'latin1',
      );
    const name = 'TabelaIBPTaxSP26.2.A.csv';
    const settings = await openSettings(page, store, 'Tabela IBPT');
    await waitForText(settings.getByRole('alert'), 'Nenhuma tabela do IBPT de SP importada');
    const picker = settings.getByLabel('Arquivo da tabela IBPT (.csv)');
    await picker.setInputFiles({ name, mimeType: 'text/csv', buffer: table('dez') });
    await settings.getByRole('button', { name: 'Importar tabela IBPT' }).click();
    await waitForText(settings.getByRole('alert'), `${name}, linha 3, nacionalfederal: percentual inválido: "dez"`);
    await picker.setInputFiles({ name, mimeType: 'text/csv', buffer: table('10.15') });
    await settings.getByRole('button', { name: 'Importar tabela IBPT' }).click();
    await waitForText(settings.getByRole('status'), `Tabela importada: UF SP · versão 26.2.A · chave B1A2C3 · vigência ${from} a ${until} · 2 NCMs.`);
    const outside = settings.getByRole('table', { name: /Produtos com a alíquota média/ });
    await waitForText(outside, 'Arroz branco tipo 1 5kg');
    expect(await outside.textContent()).not.toContain('Café torrado');
    await screenshotOf(page, 'tabela-ibpt');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);

    // Café (in the table) and Arroz (not): 18.90 × 31.45 % = 5.94, 27.45 × 4 % (the flat rate) = 1.10.
    const nNF = await sellInCash(page, ['7891000100103', '7896005800010'], '50,00');
    const preview = await rpc<{ lines: string[] }>(store, 'receiptPreview', [terminalReceipt(store, nNF).id]);
    expect(preview.lines.join('\n')).toMatch(/Tributos Totais Incidentes[^\n]*\n?[^\n]*R\$ 7,04/);
    expect(preview.lines).toContain('Fonte: IBPT, chave B1A2C3, versão 26.2.A');
    await page.keyboard.press('Enter');
  });

  it('saves choices made in the settings selects with their types (paper width, QR Code version)', async () => {
    const settings = await openSettings(page, store, 'Impressora');
    await settings.getByLabel('Largura do papel').selectOption('58 mm');
    await settings.getByRole('button', { name: 'Salvar impressora' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');
    await settings.getByRole('tab', { name: 'Empresa' }).click();
    await settings.getByLabel('Versão do QR Code').selectOption('3');
    await settings.getByRole('button', { name: 'Salvar empresa' }).click();
    await waitForText(settings.getByRole('status'), 'Salvo.');

    const saved = await rpc<{ printer: { paperWidth: unknown }; company: { qrCodeVersion: unknown } }>(store, 'getSettings', []);
    expect(saved.printer.paperWidth).toBe(58);
    expect(saved.company.qrCodeVersion).toBe(3);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('lists what the contingency left for a person, and sends a refused receipt again once the token is fixed', async () => {
    // Another company at the same service: its token makes the service refuse this store's receipts.
    const other = await createCompany(join(store.dataDir, 'service'), {
      cnpj: '11444777000161',
      nome: 'Outra Loja',
      'csc-id': '1',
      csc: 'CSC-DA-OUTRA-LOJA-1234',
    });
    const saveToken = async (token: string) => {
      const settings = await openSettings(page, store, 'Serviço');
      await settings.getByLabel(/^Token de acesso/).fill(token);
      await settings.getByRole('button', { name: 'Salvar serviço' }).click();
      await waitForText(settings.getByRole('status'), 'Salvo.');
      return settings;
    };

    let settings = await saveToken(other.token);
    await settings.getByRole('tab', { name: 'Contingência' }).click();
    await settings.getByLabel('Justificativa da contingência').fill('Teste da loja: token trocado por engano');
    await settings.getByRole('button', { name: 'Entrar em contingência' }).click();
    await waitForText(settings, 'Situação: ativa');
    await page.keyboard.press('Escape');

    // Issued offline, printed, then refused by the service: it waits for a person.
    const nNF = await sellInCash(page, ['7891000053508'], '10,00', 'Requer atenção');
    await waitForText(page.getByRole('banner', { name: 'Situação do terminal' }), '1 pendência da contingência (F10)');
    await page.keyboard.press('Enter'); // "Nova venda"

    settings = await saveToken(store.token);
    await settings.getByRole('tab', { name: 'Contingência' }).click();
    const tasks = settings.getByRole('region', { name: 'Pendências da contingência' });
    await waitForText(tasks, new RegExp(`NFC-e de contingência nº ${nNF} \\(série \\d+\\) não foi aceita: .*não é esta empresa`));
    await tasks.scrollIntoViewIfNeeded();
    await screenshotOf(page, 'contingencia-pendencias');
    await tasks.getByRole('button', { name: /^Reenviar: / }).click();
    await waitForText(tasks, 'Nenhuma pendência.');
    // Sent again under its own key with the right token: the very receipt printed, authorized.
    await expect.poll(() => terminalReceipt(store, nNF).state).toBe('authorized');
    const banner = page.getByRole('banner', { name: 'Situação do terminal' });
    await expect.poll(() => banner.textContent()).not.toContain('pendência');

    await settings.getByRole('button', { name: 'Sair da contingência' }).click();
    await waitForText(settings, 'Situação: inativa');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });
});
