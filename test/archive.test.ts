// `balcao arquivar` on both stores: NFC-e issued through a real `balcao service` (with their
// idempotency keys, one cancelled) are archived month by month once the law's five years are over
// (the archive's "now" is the first day they may go, the documents themselves are real): the ZIP
// is written, read back and holds every document; then, and only then, the documents and their
// keys leave the database, but for the one an NF-e de devolução refers to. A run killed after the ZIP (its deletions fail) loses nothing and the
// next run finishes; a leftover partial file is written over; a run again changes nothing; a month
// still inside the five years is refused by the command with nothing written.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { brasiliaDay } from '../base/common/brasilia.ts';
import { monthPeriod, archiveNfceMonth, deletableFrom, type ArchiveOutcome } from '../service/nfce/archive.ts';
import { nfceExportFileName } from '../service/nfce/export.ts';
import type { NfceStore } from '../service/nfce/store.ts';
import { nfceBody, registerCompany, waitFor } from './helpers/nfce.ts';
import { runCli, startService, storageArgs, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { openTestService, STORES, testStorage, type TestStorage } from './helpers/stores.ts';
import { readZip } from './helpers/zip.ts';

describe.each(STORES)('balcao arquivar on %s', (kind) => {
  let storage: TestStorage | undefined;
  let service: ServiceProcess | undefined;

  afterAll(async () => {
    await service?.stop();
    await storage?.close();
  });

  it('archives a month past the five years, verified, then deletes it with its keys; interrupted, it loses nothing; younger months are refused', async () => {
    storage = await testStorage(kind);
    service = await startService({ dataDir: storage.dataDir, database: storage.database });
    const company = await registerCompany(service.url, storage);
    const ids: string[] = [];
    for (const nNF of [1, 2, 3]) {
      const accepted = await company.client.post('/api/v1/nfce', nfceBody(nNF), { headers: { 'Idempotency-Key': `venda-${nNF}` } });
      expect(accepted.status, accepted.text).toBe(202);
      ids.push((await waitFor(company.client, accepted.body.id)).id);
    }
    const cancelled = await company.client.post(`/api/v1/nfce/${ids[1]}/cancelar`, { justificativa: 'Cliente desistiu da compra no caixa' });
    expect(cancelled.status, cancelled.text).toBe(200);
    // A fourth, with a consumer, partly returned: its NF-e de devolução refers to it, so it stays.
    const withReturn = await company.client.post('/api/v1/nfce', nfceBody(4, { dest: { cpf: '52998224725' } }), { headers: { 'Idempotency-Key': 'venda-4' } });
    expect(withReturn.status, withReturn.text).toBe(202);
    const returned = await waitFor(company.client, withReturn.body.id);
    ids.push(returned.id);
    const devolucao = await company.client.post('/api/v1/nfe/devolucao', {
      chave_nfce: returned.chave,
      itens: [{ numero_item: 1, quantidade: '1' }],
      justificativa: 'Cliente devolveu: produto com defeito',
    });
    expect(devolucao.status, devolucao.text).toBe(202);
    await expect.poll(async () => (await company.client.get(`/api/v1/nfe/${devolucao.body.id}`)).body.situacao, { timeout: 60_000 }).toBe('autorizado');
    await service.stop();
    service = undefined;

    const db = storage.db;
    const docs = await db.rows<{ id: string; chave: string; dh_emi: string }>(
      'SELECT id, chave, dh_emi FROM nfce_documents WHERE company_id = ?',
      company.companyId,
    );
    expect(docs.map((d) => d.id).sort()).toEqual([...ids].sort());
    const keys = () => db.value<number>(`SELECT count(*) FROM idempotency_keys WHERE company_id = ? AND doc_type = 'nfce'`, company.companyId);
    expect(Number(await keys())).toBe(4);
    // Issued a moment ago: usually one month, two when the run straddles a month's end.
    const months = [...new Set(docs.map((d) => brasiliaDay(new Date(d.dh_emi)).slice(0, 7)))].sort();
    const dir = tempDataDir('balcao-arquivo-');

    // Still inside the legal five years: refused by the command, nothing written or deleted.
    const where = storageArgs(storage);
    const refused = await runCli(['arquivar', ...where.args, '--empresa', company.companyId, '--mes', months[0]!, '--pasta', dir], where.env);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/prazo legal de guarda.*a partir de \d{4}-01-01\. Nada foi gravado nem removido/);
    expect(readdirSync(dir)).toEqual([]);

    const opened = await openTestService(storage);
    try {
      const target = (nfce: NfceStore) => ({ store: nfce, returns: opened.store.nfe, company: { id: company.companyId, cnpj: company.cnpj } });
      const run = async (nfce: NfceStore = opened.store.nfce): Promise<ArchiveOutcome[]> => {
        const out: ArchiveOutcome[] = [];
        for (const month of months) out.push(await archiveNfceMonth(target(nfce), month, dir, new Date(deletableFrom(monthPeriod(month)).getTime() + 1000)));
        return out;
      };
      const sum = (outcomes: ArchiveOutcome[], field: 'deleted' | 'nfceEntries' | 'notInArchive' | 'keptForReturns') =>
        outcomes.reduce((n, o) => n + o[field], 0);

      // A run killed after its archive is on disk, before any deletion (and one before it left a partial file).
      const files = months.map((m) => join(dir, nfceExportFileName(company.cnpj, monthPeriod(m))));
      writeFileSync(`${files[0]}.parcial`, 'interrompido no meio');
      const dying: NfceStore = Object.assign(Object.create(opened.store.nfce) as NfceStore, {
        deleteArchived: () => Promise.reject(new Error('processo morto')),
      });
      await expect(run(dying)).rejects.toThrow('processo morto');
      expect(existsSync(files[0]!)).toBe(true);
      expect(existsSync(`${files[0]}.parcial`)).toBe(false);
      expect(Number(await db.value('SELECT count(*) FROM nfce_documents WHERE company_id = ?', company.companyId))).toBe(4);

      // Run again: the archive is read back (not written again), then the documents go.
      const done = await run();
      expect(done[0]!.written).toBe(false);
      expect(sum(done, 'nfceEntries')).toBe(4);
      expect(sum(done, 'deleted')).toBe(3);
      expect(sum(done, 'keptForReturns')).toBe(1);
      expect(sum(done, 'notInArchive')).toBe(0);
      expect(await db.rows('SELECT id FROM nfce_documents WHERE company_id = ?', company.companyId)).toEqual([{ id: returned.id }]);
      expect(Number(await keys())).toBe(1);
      const archived = new Map<string, Buffer>();
      for (const f of files) for (const [name, bytes] of await readZip(readFileSync(f))) archived.set(name, bytes);
      for (const d of docs) expect(archived.get(`${d.chave}-nfce.xml`)!.toString('utf8')).toContain(`NFe${d.chave}`);
      expect([...archived.keys()].filter((n) => n.includes('-evento-110111'))).toHaveLength(1);
      expect([...archived.keys()].filter((n) => n.startsWith('devolucoes/'))).toHaveLength(1);

      // And again: nothing left to do, nothing changes.
      const again = await run();
      expect(again.map((o) => [o.written, o.deleted])).toEqual(months.map(() => [false, 0]));
    } finally {
      await opened.store.close();
    }
  });
});
