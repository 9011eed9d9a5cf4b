// `balcao start` (what `npm start` runs): one command that starts a working store from a fresh
// clone. All data lives under one directory (BALCAO_DATA, default ./.data), so a second start
// keeps the sales, the company and its token.
//
// Today it starts the embedded issuance service in sandbox mode with a demo company. The checkout
// screen and the terminal are not built yet (issue 7); this says so instead of pretending.

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEMO_CNPJ, DEMO_CSC } from '../fiscal/samples.ts';

const execFileAsync = promisify(execFile);
const balcao = fileURLToPath(new URL('./balcao.js', import.meta.url));

type DemoCompany = { company_id: string; token: string };

async function demoCompany(serviceDir: string, file: string): Promise<DemoCompany> {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DemoCompany;
  const { stdout } = await execFileAsync(process.execPath, [
    balcao, 'company', 'create', '--data', serviceDir,
    '--cnpj', DEMO_CNPJ, '--uf', 'SP', '--nome', 'MERCADO BALCÃO DEMONSTRAÇÃO LTDA',
    '--csc-id', DEMO_CSC.id, '--csc', DEMO_CSC.token,
  ]);
  const created = JSON.parse(stdout) as DemoCompany;
  // The token is shown once by the CLI; the demo keeps it for the next start, readable only by
  // this user (it authorizes issuance for the demo company).
  writeFileSync(file, JSON.stringify(created, null, 2) + '\n', { mode: 0o600 });
  return created;
}

export async function run(args: string[]): Promise<number> {
  const dataDir = resolve(process.env.BALCAO_DATA ?? '.data');
  const serviceDir = join(dataDir, 'service');
  mkdirSync(serviceDir, { recursive: true, mode: 0o700 });
  const company = await demoCompany(serviceDir, join(dataDir, 'demo-company.json'));
  const port = process.env.BALCAO_PORT ?? '8765';
  process.stdout.write(
    [
      '',
      'Balcão — serviço de emissão em modo sandbox (autoridade fiscal simulada).',
      `  Dados:    ${dataDir}`,
      `  API:      http://127.0.0.1:${port}/api/v1  (documentação: /api/v1/openapi.json)`,
      `  Empresa:  ${company.company_id}  (token em ${join(dataDir, 'demo-company.json')})`,
      '',
      'A tela do caixa ainda não está pronta: por enquanto o start sobe só o serviço de emissão.',
      '',
    ].join('\n'),
  );
  const service = await import('../service/main.ts');
  return service.run(['--port', port, '--data', serviceDir, ...args]);
}
