// The checkout screen end to end: the real `balcao start` (embedded sandbox service, terminal
// core, virtual printer, browser-mode host) and the built screen in headless Chromium, driven as
// a cashier and a manager do it: by visible labels, roles and keys.
//
// 1. Three items by barcode, paid part cash and part card, authorized, printed on the virtual
//    printer (the screen's printed-receipts panel and a job file in the printer folder).
// 2. At the till "Imprimir" does not print a second copy; the manager reprints with the PIN.
// 3. A manager cancels that receipt with PIN and justification: "Cancelada", at the service too.
// 4. A receipt the authority rejected (391) is corrected on the screen, on the manager's PIN,
//    and authorized, same nNF.
// 5. Another rejected receipt whose customer left: the manager voids its number (inutilização).
// 6. Static PIX and cash in one sale, with change: the QR Code on screen decodes (zbarimg) to the
//    BR Code of the store's key, amount and reference; the cashier confirms it; the authorized XML
//    records both payments, the change and the hand confirmation.
// 7. Dynamic PIX: "PIX Dinâmico" charges the amount due at the demo's simulated PSP; its QR Code
//    decodes (zbarimg) to a dynamic BR Code pointing at the charge's location at the PSP;
//    "Simular pagamento" pays it, the sale finishes and prints by itself, and the authorized XML's
//    card group names the PSP (tpIntegra 1, its CNPJ, the endToEndId in cAut). The receipt is
//    then cancelled and the PIX refunded: the simulator has the devolução DEVOLVIDO.
// 8. The same store's MDF-e and NF-e de devolução through the service's API, a range of numbers
//    voided, and every document of the day valid against the schemas, its signature verifying.
// The store's CNPJ has letters: 12ABC34501DE35, the Receita's example (`balcao start --cnpj`). The
// printed DANFE shows it masked, 12.ABC.345/01DE-35, and the QR Code of the preview the screen
// shows decodes to the receipt's QR text, whose key carries the letters.
// Screenshots of the checkout, the payment and the receipt preview go to test-output/e2e/.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Resvg } from '@resvg/resvg-js';
import { PNG } from 'pngjs';
import { brasiliaDay } from '../../base/common/brasilia.ts';
import { keyInSignedXml } from '../../fiscal/access-key.ts';
import { sampleMdfeRequest } from '../../fiscal/samples.ts';
import { firstText } from '../../fiscal/xml.ts';
import { crc16CcittFalse } from '../../base/common/pix/br-code.ts';
import { readQr } from '../escpos-decoder.ts';
import { PspClient } from '../../electron/core/pix/psp-client.ts';
import type { PspSetup } from '../../electron/core/pix/psp-settings.ts';
import { expectValidAndSigned } from '../helpers/documents.ts';
import { pfxOfPem } from '../helpers/pkcs12.ts';
import { readZip } from '../helpers/zip.ts';
import {
  consumerAfterRefusal,
  lastPrintedJob,
  openSettings,
  outboxDump,
  printerJobs,
  rpc,
  saleRejected391,
  scan,
  screenshotOf,
  serviceReceipt,
  serviceXml,
  terminalReceipt,
  totalPanel,
  waitForText,
} from './checkout-helpers.ts';
import { launchChromium, openCheckout, startStore, type Store } from './harness.ts';

const STORE_CNPJ = '12ABC34501DE35';

/** What zbarimg (zbar-tools) reads in a PNG: the one QR Code's text. */
function zbar(png: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'balcao-zbar-'));
  try {
    writeFileSync(join(dir, 'qr.png'), png);
    return execFileSync('zbarimg', ['--quiet', '--raw', '-Sdisable', '-Sqrcode.enable', join(dir, 'qr.png')], { encoding: 'utf8' }).replace(/\n$/, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** EMV TLV records (ID, 2-digit length, value), read here apart from the encoder. */
/** The PSP simulator's "paid late" fault over its HTTPS control (mutual TLS, as the terminal reaches it): the endToEndId. */
async function payLateAtSimulator(psp: PspSetup, txid: string): Promise<string> {
  const cert = psp.certificate as { certPem: string; keyPem: string };
  const url = new URL(`/simulador/cob/${txid}/pagar?atrasado=1`, psp.baseUrl);
  const body = await new Promise<string>((resolve, reject) => {
    const req = httpsRequest(url, { method: 'POST', ca: psp.caPem ?? undefined, cert: cert.certPem, key: cert.keyPem }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    req.end();
  });
  return (JSON.parse(body) as { endToEndId: string }).endToEndId;
}

function emvRecords(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < text.length; i += 4 + Number(text.slice(i + 2, i + 4)))
    out.set(text.slice(i, i + 2), text.slice(i + 4, i + 4 + Number(text.slice(i + 2, i + 4))));
  return out;
}

let store: Store;
let browser: Browser;
let page: Page;
let soldNumber: number;
let pixSale: { id: string; chave: string };

beforeAll(async () => {
  [store, browser] = await Promise.all([startStore({ cnpj: STORE_CNPJ }), launchChromium()]);
  expect(store.screen).toBe(true);
  page = await openCheckout(browser, store.checkoutUrl);
});

afterEach((context) => {
  // The store's own log (and the terminal's outbox) say why a receipt did not move on.
  if (context.task.result?.state === 'fail') console.error(`--- balcao start ---\n${store.output.slice(-80).join('\n')}\n--- outbox ---\n${outboxDump(store)}`);
});

afterAll(async () => {
  await browser?.close();
  if (store) expect((await store.stop()).code).toBe(0);
});

describe('checkout screen', () => {
  it('sells three items by barcode, paid in cash and card, authorized and printed', async () => {
    const input = page.getByLabel('Código ou nome do produto');
    await expect.poll(() => input.evaluate((el) => el === document.activeElement)).toBe(true);
    // The secret left the address bar once the page read it.
    expect(page.url()).not.toContain('chave=');

    // Café 18,90 + Açúcar 4,79 + Arroz 27,45, typed as a scanner does: digits and Enter, fast.
    await scan(page, '7891000100103', '7891910000197', '7896005800010');
    const items = page.getByRole('table');
    await waitForText(items, 'Arroz branco tipo 1 5kg');
    expect(await items.textContent()).toContain('Café torrado e moído 500g');
    expect(await items.textContent()).toContain('Açúcar refinado 1kg');
    await waitForText(totalPanel(page), 'R$\u00a051,14');
    await screenshotOf(page, 'checkout');

    await page.keyboard.press('F2');
    const payment = page.getByRole('dialog', { name: 'Pagamento' });
    await payment.getByLabel('Valor recebido').fill('20,00');
    await page.keyboard.press('Enter');
    await waitForText(payment, /Falta\s*R\$\u00a031,14/);

    await payment.getByRole('radio', { name: 'Cartão de débito' }).check();
    // The rest is pre-filled; TEF needs the acquirer's CNPJ and authorization code, so the
    // screen refuses it without them and names the field.
    expect(await payment.getByLabel('Valor').inputValue()).toBe('31,14');
    await screenshotOf(page, 'pagamento');
    await payment.getByRole('radio', { name: 'TEF integrado' }).check();
    await payment.getByRole('button', { name: /Adicionar pagamento/ }).click();
    await waitForText(payment.getByRole('alert'), 'CNPJ da credenciadora: obrigatório');
    await payment.getByRole('radio', { name: 'Maquininha não integrada' }).check();
    await payment.getByLabel('Bandeira (opcional)').selectOption('02');
    await payment.getByRole('button', { name: /Adicionar pagamento/ }).click();
    await waitForText(payment, /Falta\s*R\$\u00a00,00/);
    expect(await payment.getByRole('button', { name: /Finalizar venda/ }).isEnabled()).toBe(true);

    await page.keyboard.press('F2');
    const panel = page.getByRole('region', { name: 'Venda concluída' });
    await waitForText(panel.getByRole('status'), 'Autorizada');
    soldNumber = Number(/NFC-e nº (\d+)/.exec((await panel.textContent()) ?? '')?.[1]);
    expect(soldNumber).toBeGreaterThan(0);
    const preview = panel.getByRole('img', { name: `DANFE NFC-e nº ${soldNumber}` });
    await preview.waitFor({ timeout: 20_000 });
    await expect.poll(() => preview.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(100);

    // Printed: the panel of the printer's recent jobs shows it, and the job file exists.
    await waitForText(page.getByRole('region', { name: 'Impressões recentes' }), `NFC-e nº ${soldNumber}`);
    await expect.poll(() => printerJobs(store).length).toBeGreaterThan(0);
    await screenshotOf(page, 'recibo');

    const receipt = terminalReceipt(store, soldNumber);
    expect(receipt.state).toBe('authorized');
    expect((await serviceReceipt(store, receipt.service_id!)).status).toBe('autorizado');

    // The store's CNPJ, with its letters, in the key, on paper and in the QR Code.
    const xml = await serviceXml(store, 'nfce', receipt.service_id!);
    expect(keyInSignedXml(xml, 'NFe')!.slice(6, 20)).toBe(STORE_CNPJ);
    const qrCode = firstText(xml, 'qrCode')!;
    expect(qrCode).toContain(`?p=${keyInSignedXml(xml, 'NFe')}|`);
    const printed = lastPrintedJob(store);
    expect(printed.toString()).toContain('CNPJ: 12.ABC.345/01DE-35');
    expect(printed.qrCodes.map((q) => q.payload)).toEqual([qrCode]);
    const { svg } = await rpc<{ svg: string }>(store, 'receiptPreview', [receipt.id]);
    const png = PNG.sync.read(new Resvg(svg, { background: '#ffffff', font: { loadSystemFonts: false } }).render().asPng());
    expect(readQr(png)?.data).toBe(qrCode);
  });

  it("prints the copy only once at the till; a second copy is a reprint behind the manager's PIN", async () => {
    const panel = page.getByRole('region', { name: 'Venda concluída' });
    const jobs = printerJobs(store).length;
    await panel.getByRole('button', { name: 'Imprimir' }).click();
    await waitForText(panel.getByRole('alert'), 'já foi impressa');
    expect(printerJobs(store)).toHaveLength(jobs);

    await page.keyboard.press('F9');
    await page
      .getByRole('dialog', { name: 'Recibos recentes' })
      .getByRole('row', { name: `NFC-e nº ${soldNumber}` })
      .getByRole('button', { name: 'Reimprimir' })
      .click();
    const reprint = page.getByRole('dialog', { name: 'Reimprimir NFC-e' });
    const confirm = reprint.getByRole('button', { name: 'Reimprimir' });
    await expect.poll(() => reprint.getByLabel('Gerente', { exact: true }).locator('option:checked').textContent()).toBe(store.manager.name);
    expect(await confirm.isDisabled()).toBe(true); // no PIN yet
    await reprint.getByLabel('PIN do gerente').fill('0000');
    await confirm.click();
    await waitForText(reprint.getByRole('alert'), /PIN/i);
    expect(printerJobs(store)).toHaveLength(jobs);
    await reprint.getByLabel('PIN do gerente').fill(store.manager.pin);
    await confirm.click();
    await waitForText(reprint.getByRole('status'), 'Reimpressão enviada');
    await expect.poll(() => printerJobs(store).length).toBe(jobs + 1);
    await reprint.getByRole('button', { name: 'Voltar aos recibos' }).click();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('lets a manager cancel the receipt with PIN and justification', async () => {
    await page.keyboard.press('F9');
    const receipts = page.getByRole('dialog', { name: 'Recibos recentes' });
    const row = receipts.getByRole('row', { name: `NFC-e nº ${soldNumber}` });
    // Minutes left to cancel, ticking (29 minutes at most: the terminal keeps a safety margin).
    const countdown = row.getByLabel(/Tempo restante para cancelar/);
    const first = await countdown.textContent();
    expect(first).toMatch(/^(2[0-8]|29):\d\d$|^29:00$/);
    await expect.poll(() => countdown.textContent()).not.toBe(first);
    await screenshotOf(page, 'recibos');

    await row.getByRole('button', { name: 'Cancelar NFC-e' }).click();
    const cancel = page.getByRole('dialog', { name: 'Cancelar NFC-e' });
    const manager = cancel.getByLabel('Gerente', { exact: true });
    await expect.poll(() => manager.locator('option:checked').textContent()).toBe(store.manager.name);
    const confirm = cancel.getByRole('button', { name: 'Confirmar cancelamento' });

    // 15 to 255 characters: too short keeps "Confirmar" disabled and the counter says why.
    await cancel.getByLabel('PIN do gerente').fill('0000');
    await cancel.getByLabel('Justificativa do cancelamento').fill('Desistiu');
    expect(await confirm.isDisabled()).toBe(true);
    await waitForText(cancel, 'faltam 7 caracteres');
    await cancel.getByLabel('Justificativa do cancelamento').fill('Cliente desistiu da compra no caixa');

    // A wrong PIN is the core's error, shown and recoverable.
    await confirm.click();
    await waitForText(cancel.getByRole('alert'), /PIN/i);
    await cancel.getByLabel('PIN do gerente').fill(store.manager.pin);
    await confirm.click();
    await waitForText(cancel.getByRole('status'), 'NFC-e cancelada.', 30_000);

    await cancel.getByRole('button', { name: 'Voltar aos recibos' }).click();
    await waitForText(page.getByRole('dialog', { name: 'Recibos recentes' }).getByRole('row', { name: `NFC-e nº ${soldNumber}` }), 'Cancelada');
    const receipt = terminalReceipt(store, soldNumber);
    expect(receipt.state).toBe('cancelled');
    const atService = await serviceReceipt(store, receipt.service_id!);
    expect(atService.status).toBe('cancelado');

    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('resolves a receipt the authority rejected: card data corrected, sent again with the same number', async () => {
    const nNF = await saleRejected391(store);

    await page.keyboard.press('F9');
    const row = page.getByRole('dialog', { name: 'Recibos recentes' }).getByRole('row', { name: `NFC-e nº ${nNF}` });
    await waitForText(row, /Rejeitada.*\(391\)/);
    await row.getByRole('button', { name: 'Corrigir e reenviar' }).click();

    const correct = page.getByRole('dialog', { name: 'Corrigir e reenviar NFC-e' });
    await waitForText(correct, /rejeitada pela SEFAZ \(391\)/);
    expect(await correct.getByLabel('Valor do pagamento 1').inputValue()).toBe('18,90');
    await correct.getByRole('radio', { name: 'Maquininha não integrada' }).check();
    await correct.getByLabel('Bandeira (opcional)').selectOption('01');
    await correct.getByLabel('Motivo da correção').fill('Faltavam os dados do cartão');
    await correct.getByLabel('PIN do gerente').fill(store.manager.pin);
    await correct.getByRole('button', { name: 'Corrigir e reenviar' }).click();
    await waitForText(correct.getByRole('status'), 'mesmo número');
    await correct.getByRole('button', { name: 'Voltar aos recibos' }).click();

    const again = page.getByRole('dialog', { name: 'Recibos recentes' }).getByRole('row', { name: `NFC-e nº ${nNF}` });
    await waitForText(again, 'Autorizada');
    const receipt = terminalReceipt(store, nNF);
    expect(receipt.state).toBe('authorized');
    expect((await serviceReceipt(store, receipt.service_id!)).numero).toBe(nNF);
    await page.keyboard.press('Escape');
  });

  it('lets a manager void the number of a rejected sale the customer gave up on', async () => {
    const nNF = await saleRejected391(store);
    await page.keyboard.press('F9');
    const row = page.getByRole('dialog', { name: 'Recibos recentes' }).getByRole('row', { name: `NFC-e nº ${nNF}` });
    await waitForText(row, /Rejeitada.*\(391\)/);
    await row.getByRole('button', { name: 'Inutilizar número' }).click();

    const dialog = page.getByRole('dialog', { name: 'Inutilizar número' });
    const manager = dialog.getByLabel('Gerente', { exact: true });
    await expect.poll(() => manager.locator('option:checked').textContent()).toBe(store.manager.name);
    const confirm = dialog.getByRole('button', { name: 'Inutilizar', exact: true });
    await dialog.getByLabel('PIN do gerente').fill(store.manager.pin);
    expect(await confirm.isDisabled()).toBe(true); // no justification yet
    await dialog.getByLabel('Justificativa da inutilização').fill('Cliente desistiu da compra após a rejeição');
    await confirm.click();
    await waitForText(dialog.getByRole('status'), 'Número inutilizado.', 30_000);

    await dialog.getByRole('button', { name: 'Voltar aos recibos' }).click();
    await waitForText(page.getByRole('dialog', { name: 'Recibos recentes' }).getByRole('row', { name: `NFC-e nº ${nNF}` }), 'Inutilizada');
    expect(terminalReceipt(store, nNF).state).toBe('voided');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('takes static PIX (QR Code on screen, confirmed by hand) and cash together, shows the change, and the authorized XML carries both and the change', async () => {
    await page.keyboard.press('Enter'); // leave the last receipt for a new sale
    await scan(page, '7891000100103'); // Café 18,90
    await waitForText(totalPanel(page), 'R$\u00a018,90');
    await page.keyboard.press('F2');
    const payment = page.getByRole('dialog', { name: 'Pagamento' });
    await payment.getByRole('radio', { name: 'PIX Estático' }).check();
    await payment.getByLabel('Valor', { exact: true }).fill('10,00');
    await payment.getByRole('button', { name: /Mostrar QR Code PIX/ }).click();
    const qr = payment.getByRole('img', { name: /QR Code PIX de R\$\s10,00/ });
    const brCode = zbar(await qr.screenshot());
    // The test's own reading of the BR Code: records, CRC, the store's key, amount and reference.
    const records = emvRecords(brCode);
    expect(records.get('63')).toBe(crc16CcittFalse(brCode.slice(0, -4)));
    expect(emvRecords(records.get('26')!)).toEqual(
      new Map([
        ['00', 'br.gov.bcb.pix'],
        ['01', STORE_CNPJ],
      ]),
    );
    expect(records.get('54')).toBe('10.00');
    const reference = emvRecords(records.get('62')!).get('05')!;
    expect(reference).toMatch(/^[0-9A-F]{25}$/);
    await waitForText(payment, reference);
    await payment.getByRole('button', { name: 'Confirmar recebimento do PIX' }).click();
    await waitForText(payment, /Falta\s*R\$\u00a08,90/);
    await payment.getByLabel('Valor recebido').fill('20,00');
    await page.keyboard.press('Enter');
    await waitForText(payment, /Troco\s*R\$\u00a011,10/);
    await payment.getByRole('button', { name: /Finalizar venda/ }).click();

    const panel = page.getByRole('region', { name: 'Venda concluída' });
    await waitForText(panel.getByRole('status'), 'Autorizada');
    await waitForText(panel, /Troco\s*R\$\u00a011,10/);
    const nNF = Number(/NFC-e nº (\d+)/.exec((await panel.textContent()) ?? '')?.[1]);
    const res = await fetch(`${store.serviceUrl}/api/v1/nfce/${terminalReceipt(store, nNF).service_id}/xml`, {
      headers: { authorization: `Bearer ${store.token}` },
    });
    const xml = await res.text();
    pixSale = { id: terminalReceipt(store, nNF).service_id!, chave: keyInSignedXml(xml, 'NFe')! };
    expect(xml.match(/<tPag>[0-9]{2}<\/tPag>/g)).toEqual(['<tPag>20</tPag>', '<tPag>01</tPag>']);
    expect(firstText(xml, 'infCpl')).toBe(`PIX estático (tPag 20) conferido pelo operador, sem confirmação do banco. Ref. PIX ${reference}`);
    expect(xml).toContain('<vPag>20.00</vPag>');
    expect(xml).toContain('<vTroco>11.10</vTroco>');
  });

  it('configures the PSP on screen behind the PIN: a wrong certificate password is named, "Testar conexão" gets a token, and the next test sells with it', async () => {
    // The simulator's client certificate as a store gets it from its bank: a .pfx with a password.
    const psp = JSON.parse(readFileSync(join(store.dataDir, 'psp-simulado.json'), 'utf8')) as PspSetup & { certificate: { certPem: string; keyPem: string } };
    const files = mkdtempSync(join(tmpdir(), 'balcao-psp-files-'));
    try {
      writeFileSync(join(files, 'cliente.pfx'), pfxOfPem(psp.certificate, 'senha-do-pfx'));
      writeFileSync(join(files, 'raiz.pem'), psp.caPem!);
      const settings = await openSettings(page, store, 'PIX (PSP)');
      await settings.getByLabel('Endereço da API Pix').fill(psp.baseUrl);
      await settings.getByLabel('Endereço do token OAuth2').fill(psp.tokenUrl);
      await settings.getByLabel('Client id').fill(psp.clientId);
      await settings.getByLabel('Client secret').fill(psp.clientSecret);
      await settings.getByLabel('CNPJ do PSP').fill('99.990.001/0001-98');
      await settings.getByLabel('Formato do certificado').selectOption({ label: 'PKCS#12 (.pfx ou .p12) com senha' });
      await settings.getByLabel('Arquivo do certificado PIX (.pfx/.p12)').setInputFiles(join(files, 'cliente.pfx'));
      await settings.getByLabel('Raízes confiáveis do PSP (PEM, opcional)').setInputFiles(join(files, 'raiz.pem'));
      await settings.getByLabel('Chave PIX da loja (recebedora)').fill(STORE_CNPJ);
      await settings.getByLabel('Imprimir QR Code PIX para o cliente').check();

      await settings.getByLabel('Senha do certificado PIX').fill('errada');
      await settings.getByRole('button', { name: 'Testar conexão' }).click();
      await waitForText(settings.getByRole('alert'), 'Certificado do cliente PIX: a senha não abre este arquivo .pfx/.p12');
      await settings.getByLabel('Senha do certificado PIX').fill('senha-do-pfx');
      await settings.getByRole('button', { name: 'Testar conexão' }).click();
      await waitForText(settings.getByRole('status'), 'Conexão com o PSP funcionando');
      await settings.getByRole('button', { name: 'Salvar PSP' }).click();
      await waitForText(settings.getByRole('status'), 'PSP salvo.');
      await waitForText(settings, 'configurado (PKCS#12)');
      await page.keyboard.press('Escape');
    } finally {
      rmSync(files, { recursive: true, force: true });
    }
    // Through the browser-mode host, as the screen reads it: the certificate is now the .pfx, no secret comes back.
    const view = await rpc<Record<string, unknown>>(store, 'pspSettings', []);
    expect(view).toMatchObject({ configured: true, certificateKind: 'pfx', clientSecretSet: true, caSet: true, printQr: true, pixKey: STORE_CNPJ });
    expect(JSON.stringify(view)).not.toContain(psp.clientSecret);
  });

  it('takes dynamic PIX: the QR Code of the charge, "Simular pagamento", the sale finished and printed by itself, the PSP in the card group; cancelled, the PIX is refunded at the PSP', async () => {
    await page.keyboard.press('Enter'); // leave the last receipt for a new sale
    await scan(page, '7891000100103'); // Café 18,90
    await waitForText(totalPanel(page), 'R$\u00a018,90');
    const jobsBefore = printerJobs(store).length;
    await page.keyboard.press('F2');
    const payment = page.getByRole('dialog', { name: 'Pagamento' });
    await payment.getByRole('radio', { name: 'PIX Dinâmico' }).check();
    await payment.getByRole('button', { name: /Mostrar QR Code PIX/ }).click();
    await waitForText(payment, 'aguardando pagamento');
    const txid = (await payment.locator('dt:text-is("Identificador") + dd').textContent())!;

    // The test's own reading of the BR Code: a dynamic one (12), the charge's location at the PSP.
    const brCode = zbar(await payment.getByRole('img', { name: /QR Code PIX de R\$\s18,90/ }).screenshot());
    const records = emvRecords(brCode);
    expect(records.get('63')).toBe(crc16CcittFalse(brCode.slice(0, -4)));
    expect(records.get('01')).toBe('12');
    expect(emvRecords(records.get('62')!).get('05')).toBe('***');
    const account = emvRecords(records.get('26')!);
    expect(account.get('00')).toBe('br.gov.bcb.pix');
    // The previous test turned on "Imprimir QR Code PIX para o cliente": the slip carries the same BR Code.
    await expect.poll(() => printerJobs(store).length, { timeout: 60_000 }).toBe(jobsBefore + 1);
    const slip = lastPrintedJob(store);
    expect(slip.qrCodes.map((q) => q.payload)).toEqual([brCode]);
    expect(slip.lines.map((l) => l.text.trim())).toEqual(expect.arrayContaining(['Pague com PIX', 'R$ 18,90']));
    const psp = JSON.parse(readFileSync(join(store.dataDir, 'psp-simulado.json'), 'utf8')) as PspSetup;
    const client = new PspClient({ ...psp, timeoutMs: 30_000 });
    try {
      const atPsp = await client.getCharge(txid);
      expect(atPsp).toMatchObject({ kind: 'answer', status: 200, body: { status: 'ATIVA', valor: { original: '18.90' } } });
      expect(account.get('25')).toBe((atPsp as { body: { location: string } }).body.location);

      await payment.getByRole('button', { name: 'Simular pagamento' }).click();
      const panel = page.getByRole('region', { name: 'Venda concluída' });
      await waitForText(panel.getByRole('status'), 'Autorizada');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      await waitForText(page.getByRole('log', { name: 'Avisos da venda' }), 'Pagamento PIX confirmado pelo banco: R$\u00a018,90');
      await expect.poll(() => printerJobs(store).length, { timeout: 60_000 }).toBeGreaterThan(jobsBefore + 1); // the DANFE after the slip

      const paid = (await client.getCharge(txid)) as { body: { status: string; pix: { endToEndId: string }[] } };
      expect(paid.body.status).toBe('CONCLUIDA');
      const e2eid = paid.body.pix[0]!.endToEndId;
      const nNF = Number(/NFC-e nº (\d+)/.exec((await panel.textContent()) ?? '')?.[1]);
      const receipt = terminalReceipt(store, nNF);
      const xml = await serviceXml(store, 'nfce', receipt.service_id!);
      expect(xml.match(/<tPag>[0-9]{2}<\/tPag>/g)).toEqual(['<tPag>17</tPag>']);
      expect(firstText(xml, 'tpIntegra')).toBe('1');
      expect(firstText(xml, 'cAut')).toBe(e2eid);
      expect(xml).toContain(`<card><tpIntegra>1</tpIntegra><CNPJ>${psp.pspCnpj}</CNPJ><cAut>${e2eid}</cAut></card>`);

      // Cancelled by the manager: the core asks the PSP for the devolução and reads it until done.
      const [manager] = await rpc<{ id: string }[]>(store, 'listManagers', []);
      await rpc(store, 'cancelReceipt', [
        receipt.id,
        { managerId: manager!.id, pin: store.manager.pin, justification: 'Cliente desistiu da compra paga por PIX' },
      ]);
      await expect
        .poll(async () => ((await client.getRefund(e2eid, `D${txid}`)) as { body?: { status?: string } }).body?.status, { timeout: 90_000 })
        .toBe('DEVOLVIDO');
    } finally {
      await client.close();
    }
  });

  it('a PIX paid after the cashier cancelled the charge: the status bar warns, the manager sees it in "PIX pagos sem venda" and concludes the sale with it', async () => {
    await page.keyboard.press('Enter'); // leave the last receipt for a new sale
    await scan(page, '7891000100103'); // Café 18,90
    await waitForText(totalPanel(page), 'R$\u00a018,90');
    await page.keyboard.press('F2');
    const payment = page.getByRole('dialog', { name: 'Pagamento' });
    await payment.getByRole('radio', { name: 'PIX Dinâmico' }).check();
    await payment.getByRole('button', { name: /Mostrar QR Code PIX/ }).click();
    await waitForText(payment, 'aguardando pagamento');
    const txid = (await payment.locator('dt:text-is("Identificador") + dd').textContent())!;
    await payment.getByRole('button', { name: 'Cancelar cobrança' }).click();
    await waitForText(payment, 'cancelada');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);

    // The simulator's "paid late" fault: the customer's bank pays the removed charge anyway.
    const psp = JSON.parse(readFileSync(join(store.dataDir, 'psp-simulado.json'), 'utf8')) as PspSetup;
    const e2eid = await payLateAtSimulator(psp, txid);
    await waitForText(page.getByLabel('Situação do terminal'), '1 cobrança PIX paga sem venda');

    const settings = await openSettings(page, store, 'PIX pagos sem venda');
    const row = settings.getByRole('row').filter({ hasText: txid });
    await waitForText(row, e2eid);
    await waitForText(row, 'R$\u00a018,90');
    await waitForText(row, 'aberta');
    await row.getByRole('button', { name: 'Concluir venda' }).click();
    await waitForText(settings.getByRole('status'), 'Venda concluída com o PIX de R$\u00a018,90');
    // Concluded, it leaves the list (the previous test's refunded PIX may still be listed).
    await expect.poll(() => row.count(), { timeout: 60_000 }).toBe(0);

    // One NFC-e for the sale, authorized, paid by that PIX (tPag 17, the endToEndId in cAut).
    const saleId = txid.slice(0, 32).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
    const sale = await rpc<{ state: string; payments: { tPag: string; card?: { cAut: string } }[] }>(store, 'getSale', [saleId]);
    expect(sale).toMatchObject({ state: 'finished', payments: [{ tPag: '17', card: expect.objectContaining({ cAut: e2eid }) }] });
    await expect
      .poll(
        async () => (await rpc<{ saleId: string; state: string }[]>(store, 'recentReceipts', [20])).filter((r) => r.saleId === saleId).map((r) => r.state),
        {
          timeout: 90_000,
        },
      )
      .toEqual(['authorized']);
    await expect.poll(() => page.getByLabel('Situação do terminal').textContent()).not.toMatch(/paga sem venda/);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    // The counter, which still had the sale, shows it finished with its receipt.
    await waitForText(page.getByRole('region', { name: 'Venda concluída' }).getByRole('status'), 'Autorizada');
    await page.getByRole('button', { name: /Nova venda/ }).click();
  });

  it('works from the keyboard alone: name search, quantity, Delete, consumer, discard', async () => {
    await page.keyboard.press('Enter'); // leave the last receipt for a new sale
    const input = page.getByLabel('Código ou nome do produto');
    await expect.poll(() => input.evaluate((el) => el === document.activeElement)).toBe(true);

    // A name lists the catalog's matches; arrows move, Enter adds the highlighted one.
    await page.keyboard.type('ão'); // Feijão, Pão francês, Sabão em pó, Macarrão
    const results = page.getByRole('listbox', { name: 'Produtos encontrados' });
    await expect.poll(() => results.getByRole('option').count()).toBeGreaterThan(1);
    await page.keyboard.press('ArrowDown');
    const picked = (await results.getByRole('option', { selected: true }).textContent()) ?? '';
    await page.keyboard.press('Enter');
    const name = picked.replace(/(SEM GTIN|cód\.|[0-9]{8,}).*$/, '').trim();
    await waitForText(page.getByRole('table'), name);

    // 3*code sets the quantity; Delete removes the selected (last added) line, which stays listed.
    await scan(page, '3*1010');
    await waitForText(page.getByRole('table'), /Macarrão espaguete 500g\s*3 UN/);
    await waitForText(totalPanel(page), '2 itens');
    await page.keyboard.press('Delete');
    await waitForText(totalPanel(page), '1 item');
    await waitForText(page.getByRole('table'), 'removido');

    // The consumer's CPF is checked on the screen, naming the field.
    await consumerAfterRefusal(page, {
      wrong: '529.982.247-24',
      refusal: 'CPF/CNPJ do consumidor: CPF inválido',
      right: '529.982.247-25',
      shown: 'Consumidor: CPF 529.982.247-25',
    });

    // F8 gives the sale up after a confirmation; the counter is empty again.
    await page.keyboard.press('F8');
    await page.getByRole('dialog', { name: 'Cancelar venda' }).getByRole('button', { name: 'Descartar venda' }).click();
    await waitForText(totalPanel(page), 'R$\u00a00,00');
    await expect.poll(() => input.evaluate((el) => el === document.activeElement)).toBe(true);
  });
  it("issues the store's MDF-e and an NF-e de devolução through the API and voids a range; every document of the day is valid and signed", async () => {
    const call = async (path: string, body: unknown) => {
      const res = await fetch(`${store.serviceUrl}/api/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    const get = async (path: string) =>
      (await (await fetch(`${store.serviceUrl}/api/v1/${path}`, { headers: { authorization: `Bearer ${store.token}` } })).json()) as Record<string, string>;

    const mdfe = await call('mdfe/emitir', sampleMdfeRequest({ nMDF: 1 }));
    expect(mdfe.status, JSON.stringify(mdfe.body)).toBe(201);
    expect(mdfe.body.chave!.slice(6, 20)).toBe(STORE_CNPJ);
    expectValidAndSigned(await serviceXml(store, 'mdfe', mdfe.body.mdfe_id!), 'procMDFe', 'MDF-e');

    const devolucao = await call('nfe/devolucao', {
      chave_nfce: pixSale.chave,
      itens: [{ numero_item: 1, quantidade: '1' }],
      justificativa: 'Cliente devolveu: produto com defeito',
      destinatario: { cpf: '52998224725', nome: 'Maria Souza' },
    });
    expect(devolucao.status, JSON.stringify(devolucao.body)).toBe(202);
    await expect.poll(async () => (await get(`nfe/${devolucao.body.id}`)).situacao, { timeout: 30_000 }).toBe('autorizado');
    const nfe = await serviceXml(store, 'nfe', devolucao.body.id!);
    expect(keyInSignedXml(nfe, 'NFe')!.slice(6, 20)).toBe(STORE_CNPJ);
    expectValidAndSigned(nfe, 'procNFe', 'NF-e de devolução');

    const range = await call('nfce/inutilizar', { serie: 1, numero_inicial: 900, numero_final: 902, justificativa: 'Numeros pulados por falha no sistema' });
    expect(range.status, JSON.stringify(range.body)).toBe(200);

    // The accountant's export of the day: each receipt, both cancellations (the manager's, the dynamic
    // PIX sale's), both inutilizações, the return.
    const today = brasiliaDay(new Date());
    const zip = await fetch(`${store.serviceUrl}/api/v1/nfce/exportacao?de=${today}&ate=${today}`, { headers: { authorization: `Bearer ${store.token}` } });
    const entries = await readZip(Buffer.from(await zip.arrayBuffer()));
    const names = [...entries.keys()];
    expect(names.filter((n) => n.endsWith('-evento-110111.xml'))).toHaveLength(2);
    expect(names).toContain('inutilizacao-serie-1-numeros-900-a-902.xml');
    expect(names.filter((n) => n.startsWith('inutilizacao-'))).toHaveLength(2);
    expect(names).toContain(`devolucoes/${keyInSignedXml(nfe, 'NFe')}-nfe.xml`);
    for (const name of names.filter((n) => n.endsWith('.xml'))) {
      const file = name.split('/').pop()!;
      const schema = /-nf(c)?e\.xml$/.test(file) ? 'procNFe' : file.includes('-evento-') ? 'procEventoCancNFe' : 'procInutNFe';
      expectValidAndSigned(entries.get(name), schema, name);
      expect(file.startsWith('inutilizacao-') || file.slice(6, 20) === STORE_CNPJ, name).toBe(true);
    }
  });
});
