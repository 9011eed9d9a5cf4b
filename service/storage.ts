// Where a service process keeps its data, from its command line and environment, the same for
// every command that opens it (balcao service, company, sefaz):
//
// - `--data DIR` (SQLite, the default): `DIR/service.sqlite`, the master key in `DIR/master.key`
//   (created on first use) unless BALCAO_MASTER_KEY is set. One process owns the folder.
// - `--database postgres://...` or BALCAO_DATABASE_URL (PostgreSQL): several processes may share
//   it. The master key must then be the same in every process, so it is never made up by one:
//   BALCAO_MASTER_KEY (base64), or a key file, `--chave-mestra ARQUIVO` or BALCAO_MASTER_KEY_FILE
//   (created on first use if missing: copy that file to every host), mode 0600.

import { decodeKey, readOrCreateKeyFile } from '../base/node/secret-box.ts';
import { UsageError } from './cli-args.ts';
import { DATABASE_URL_ENV, isPostgresUrl, postgresSettings, redactUrl, type PostgresSettings } from './pg-settings.ts';
import { loadMasterKey, MASTER_KEY_ENV } from './secrets.ts';

export const MASTER_KEY_FILE_ENV = 'BALCAO_MASTER_KEY_FILE';

export type Storage = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; settings: PostgresSettings; masterKeyFile: string | undefined };

/** parseArgs options shared by the commands (see the header). */
export const STORAGE_OPTIONS = {
  data: { type: 'string' },
  database: { type: 'string' },
  'chave-mestra': { type: 'string' },
} as const;

/** The usage lines of the storage options, for the commands' help. */
export const STORAGE_USAGE = `  --data DIR     pasta de dados (banco SQLite service.sqlite e chave mestra master.key)
  --database URL   PostgreSQL (postgres://usuario:senha@host:5432/banco), compartilhável por vários
                 processos; o mesmo que ${DATABASE_URL_ENV}. A chave mestra vem então de
                 ${MASTER_KEY_ENV} ou de --chave-mestra ARQUIVO (${MASTER_KEY_FILE_ENV}), a mesma em
                 todos os processos`;

type Values = { data?: string; database?: string; 'chave-mestra'?: string };

/** The storage the options and environment name; a UsageError names the option at fault. */
export function storageOf(values: Values, env: NodeJS.ProcessEnv = process.env): Storage {
  const url = values.database ?? (env[DATABASE_URL_ENV]?.trim() || undefined);
  if (url !== undefined) {
    const option = values.database !== undefined ? '--database' : DATABASE_URL_ENV;
    if (!isPostgresUrl(url)) throw new UsageError(`${option}: informe uma URL postgres://usuario:senha@host:porta/banco`);
    if (values.data !== undefined) throw new UsageError('--data e --database: informe só um (a pasta de dados é do SQLite)');
    let settings: PostgresSettings;
    try {
      settings = postgresSettings(url, env);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const masterKeyFile = values['chave-mestra'] ?? (env[MASTER_KEY_FILE_ENV]?.trim() || undefined);
    if (masterKeyFile === undefined && !env[MASTER_KEY_ENV]) {
      throw new UsageError(
        `--database: a chave mestra deve ser a mesma em todos os processos; informe ${MASTER_KEY_ENV} ou --chave-mestra ARQUIVO (${MASTER_KEY_FILE_ENV})`,
      );
    }
    return { kind: 'postgres', settings, masterKeyFile };
  }
  if (values['chave-mestra'] !== undefined) throw new UsageError('--chave-mestra: só com --database (com --data, a chave fica em DIR/master.key)');
  if (values.data === undefined || values.data === '') throw new UsageError(`--data ou --database: obrigatório (ou ${DATABASE_URL_ENV})`);
  return { kind: 'sqlite', dataDir: values.data };
}

/** Where the data is, for messages (the password of a URL hidden). */
export function describeStorage(storage: Storage): string {
  return storage.kind === 'sqlite' ? storage.dataDir : redactUrl(storage.settings.url);
}

/** The master key of `storage` (see the header). */
export function masterKeyOf(storage: Storage, env: NodeJS.ProcessEnv = process.env): Buffer {
  if (storage.kind === 'sqlite') return loadMasterKey(storage.dataDir, env);
  const fromEnv = env[MASTER_KEY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return decodeKey(fromEnv, MASTER_KEY_ENV);
  return readOrCreateKeyFile(storage.masterKeyFile!);
}
