// `npm start` on a fresh data directory: the embedded sandbox service with a demo company whose
// token works, the terminal core with the demo catalog, manager and company, and the
// browser-mode host answering the checkout URL; a sale through it is authorized and printed; one
// certificate is shared by the service's company and the terminal.
// A second start keeps everything (same company, certificate, manager, catalog), and SIGTERM
// stops it cleanly; a start on a folder another start holds is refused, naming it.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FinishedSale, ReceiptView, SaleView, TerminalSettings } from '../electron/api/terminal-api.ts';
import { loadPfx } from '../fiscal/certificate.ts';
import { DEMO_CNPJ } from '../fiscal/samples.ts';
import { openService } from '../service/open-service.ts';
import { runCli, tempDataDir } from './helpers/service-process.ts';
import { startStore, type Store } from './e2e/harness.ts';

async function rpc<T>(store: Store, method: string, args: unknown[]): Promise<T> {
  const res = await fetch(`${store.origin}/api/rpc/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${store.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ args }),
  });
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (!res.ok) throw new Error(`${method}: ${res.status} ${JSON.stringify(body.error)}`);
  return body.result as T;
}

describe('balcao start', () => {
  it('starts a sandbox store with terminal and checkout, and keeps it all on the next start', async () => {
    const dataDir = tempDataDir('balcao-start-');
    const first = await startStore({ dataDir });
    expect(first.dataDir).toBe(dataDir);
    expect(first.checkoutUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#chave=[A-Za-z0-9_-]{43}$/);
    expect(first.printerDir).toBe(join(dataDir, 'terminal', 'impressora'));
    expect(first.manager).toEqual({ name: 'Gerente Demo', pin: '1234' });
    expect(first.output.join('\n')).toContain('Gerente Demo, PIN 1234');

    // The demo company's token works at the service.
    const ask = (store: Store) =>
      fetch(`${store.serviceUrl}/api/v1/sandbox/autoridade`, {
        method: 'POST',
        headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
        body: '{}',
      });
    expect((await ask(first)).status).toBe(200);
    // Secrets on disk are readable by this user only.
    for (const file of ['demo-company.json', 'certificado-demo.pfx', 'certificado-demo.json', 'psp-simulado.json']) {
      expect(statSync(join(dataDir, file)).mode & 0o077, file).toBe(0);
    }
    const pfx = readFileSync(join(dataDir, 'certificado-demo.pfx'));

    // The terminal behind the checkout URL: demo catalog and manager, talking to this service.
    const products = await rpc<{ code: string }[]>(first, 'findProducts', ['', 100]);
    expect(products.length).toBeGreaterThanOrEqual(10);
    expect(await rpc(first, 'listManagers', [])).toEqual([{ id: expect.any(String), name: 'Gerente Demo' }]);
    // One certificate: the terminal's (for contingency) is the .pfx the service's company got.
    const { password } = JSON.parse(readFileSync(join(dataDir, 'certificado-demo.json'), 'utf8')) as { password: string };
    const loaded = loadPfx(pfx, password);
    const settings = await rpc<TerminalSettings>(first, 'getSettings', []);
    expect(settings).toMatchObject({ serviceUrl: first.serviceUrl, tokenSet: true, company: { cnpj: DEMO_CNPJ, cscSet: true }, pix: { key: DEMO_CNPJ } });
    expect(settings.certificate).toEqual({ subject: expect.any(String), cnpj: DEMO_CNPJ, notAfter: loaded.notAfter.toISOString() });

    // A sale through the checkout's API is authorized by the embedded service and printed.
    let sale = await rpc<SaleView>(first, 'openSale', []);
    sale = await rpc<SaleView>(first, 'addItem', [sale.id, { code: '1001', quantity: '2' }]);
    await rpc(first, 'addPayment', [sale.id, { tPag: '01', amountCents: sale.totalCents }]);
    const { receipt } = await rpc<FinishedSale>(first, 'finishSale', [sale.id]);
    await expect.poll(async () => (await rpc<ReceiptView>(first, 'getReceipt', [receipt.id])).state).toBe('authorized');
    await expect.poll(() => readdirSync(first.printerDir).filter((f) => f.endsWith('.bin')).length).toBeGreaterThan(0);

    const page = await fetch(first.origin + '/');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = await startStore({ dataDir });
    expect(second.companyId).toBe(first.companyId);
    expect(second.token).toBe(first.token);
    expect(second.secret).not.toBe(first.secret);
    expect(readFileSync(join(dataDir, 'certificado-demo.pfx')).equals(pfx)).toBe(true);
    expect((await ask(second)).status).toBe(200);
    expect((await rpc<unknown[]>(second, 'findProducts', ['', 100])).length).toBe(products.length);
    expect(await rpc<unknown[]>(second, 'listManagers', [])).toHaveLength(1);
    // The service moved (another free port): the terminal follows it.
    expect(await rpc(second, 'getSettings', [])).toMatchObject({ serviceUrl: second.serviceUrl });
    // So does dynamic PIX: the PSP simulator of this start charges, and its payment finishes the sale.
    const pixSale = await rpc<SaleView>(second, 'addItem', [(await rpc<SaleView>(second, 'openSale', [])).id, { code: '1001' }]);
    const charge = await rpc<{ txid: string }>(second, 'createPixCharge', [pixSale.id, pixSale.totalCents]);
    const chargeState = async () => (await rpc<{ state: string }>(second, 'pixCharge', [charge.txid])).state;
    await expect.poll(chargeState, { timeout: 60_000 }).toBe('active');
    await rpc(second, 'simulatePixPayment', [charge.txid]);
    await expect.poll(chargeState, { timeout: 60_000 }).toBe('finished');
    expect((await rpc<SaleView>(second, 'getSale', [pixSale.id])).state).toBe('finished');
    // The simulator told this start's service of it through the webhook address `balcao start` made.
    const heard = await fetch(`${second.serviceUrl}/api/v1/pix/recebidos?txid=${charge.txid}`, { headers: { authorization: `Bearer ${second.token}` } });
    expect(await heard.json()).toMatchObject({ webhook_configurado: true, data: [{ txid: charge.txid }] });
    // One store per data folder: a third start on it is refused, naming the one that holds it.
    const holder = JSON.parse(readFileSync(join(dataDir, 'service', 'balcao-em-uso.json'), 'utf8')) as { pid: number };
    const third = await runCli(['start', '--data', dataDir, '--port', '0', '--terminal-port', '0']);
    expect(third.code).toBe(1);
    expect(third.stderr).toContain(`A pasta de dados ${join(dataDir, 'service')} já está em uso por balcao start (processo ${holder.pid}, nesta máquina`);
    expect(third.stderr).toContain('poderiam dar o mesmo número a duas vendas');
    expect((await ask(second)).status).toBe(200); // the one running is untouched
    expect(await second.stop()).toEqual({ code: 0, signal: null });

    const service = await openService(join(dataDir, 'service'));
    try {
      expect((await service.store.getCompany(first.companyId))?.certificate.sha256).toBe(loaded.fingerprint256);
    } finally {
      await service.store.close();
    }
  });

  it('refuses a bad option by name', async () => {
    const result = await runCli(['start', '--port', 'abc']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--port: deve ser um número de 0 a 65535');
  });
});
