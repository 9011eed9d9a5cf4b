// The deployment's technical responsible, end to end: `balcao responsavel-tecnico` (another
// process) sets it with its CSRT sealed in the service's database; the real service, restarted,
// writes infRespTec with the right hashCSRT in a store's NFC-e; before it was set, the sandbox
// rejected a store in Paraná (a UF of the law table's list) 972.

import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nfceBody, readDb, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

const CSRT = 'G8063VRTNDMO886SFNK5LDUDEI24XJ22YIPO';
let service: ServiceProcess;
let curitiba: TestCompany;

beforeAll(async () => {
  service = await startService();
  curitiba = await registerCompany(service.url, service.dataDir, { extra: { uf: 'PR' } });
});

afterAll(async () => {
  await service?.stop();
});

const cli = (...args: string[]) => runCli(['responsavel-tecnico', ...args, '--data', service.dataDir]);

async function issue(nNF: number) {
  const res = await curitiba.client.post('/api/v1/nfce', nfceBody(nNF));
  expect(res.status, res.text).toBe(202);
  const doc = await waitFor(curitiba.client, res.body.id);
  return { doc, xml: (await curitiba.client.get(`/api/v1/nfce/${res.body.id}/xml`)).text };
}

describe('the technical responsible (infRespTec) of a deployment', () => {
  it('unset: a store in PR is rejected 972; set by the CLI (bad options named, the CSRT sealed, never shown) and after a restart, its NFC-e carries infRespTec with hashCSRT = base64(SHA-1(CSRT + key)) and is authorized', async () => {
    const rejected = await issue(1);
    expect([rejected.doc.status, rejected.doc.codigo_status, rejected.doc.motivo]).toEqual([
      'rejeitado',
      '972',
      'Rejeição: Obrigatória as informações do responsável técnico',
    ]);

    const bad = await cli('definir', '--cnpj', '12abc34501de35', '--contato', 'Suporte', '--email', 'sem-arroba', '--telefone', '4133334444');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^--cnpj: CNPJ deve usar letras maiúsculas.*\n--email: e-mail inválido.*\n$/);

    const csrtFile = join(tempDataDir('balcao-csrt-'), 'csrt.txt');
    writeFileSync(csrtFile, `${CSRT}\n`, { mode: 0o600 });
    const set = await cli(
      'definir',
      '--cnpj',
      '12ABC34501DE35',
      '--contato',
      'Suporte Fiscal',
      '--email',
      'fiscal@balcao.dev',
      '--telefone',
      '4133334444',
      '--csrt-id',
      '1',
      '--csrt-arquivo',
      csrtFile,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      responsavel_tecnico: {
        cnpj: '12ABC34501DE35',
        contato: 'Suporte Fiscal',
        email: 'fiscal@balcao.dev',
        telefone: '4133334444',
        csrt_id: 1,
        csrt: 'definido',
      },
    });
    expect(set.stdout).not.toContain(CSRT);
    const row = readDb(service.dataDir, (db) => db.prepare('SELECT * FROM technical_responsible').get() as { csrt_sealed: Buffer });
    expect(row.csrt_sealed.includes(Buffer.from(CSRT))).toBe(false);

    await service.restart();
    const authorized = await issue(2);
    expect(authorized.doc.status, JSON.stringify(authorized.doc)).toBe('autorizado');
    const key = authorized.doc.chave as string;
    const hash = createHash('sha1')
      .update(CSRT + key)
      .digest('base64');
    expect(authorized.xml).toContain(
      `<infRespTec><CNPJ>12ABC34501DE35</CNPJ><xContato>Suporte Fiscal</xContato><email>fiscal@balcao.dev</email><fone>4133334444</fone><idCSRT>01</idCSRT><hashCSRT>${hash}</hashCSRT></infRespTec></infNFe>`,
    );

    const removed = await cli('remover');
    expect(JSON.parse(removed.stdout)).toEqual({ responsavel_tecnico: null });
  });
});
