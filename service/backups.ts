// The service's copies of its SQLite database on a schedule (base/node/sqlite-backup.ts): a
// service process on a data folder (`balcao service --data`, `balcao start`) takes them while it
// serves; each copy or failure is a line of its log, a failure in words that say what to do. A
// service on PostgreSQL takes none: its data is PostgreSQL's to copy (pg_dump, base backups and
// WAL archiving), as README says.

import { BackupSchedule, backupIntervalMs } from '../base/node/sqlite-backup.ts';
import { faultWords } from '../base/node/system-faults.ts';
import { serviceBackupPlace } from './db.ts';
import { SqliteStore } from './sqlite-store.ts';
import type { ServiceStore } from './store.ts';

type Log = { info(obj: object, msg: string): void; error(obj: object, msg: string): void };

/** Starts the schedule of `store`'s copies when it is a data folder's; stop it before closing the store. */
export function scheduleBackups(store: ServiceStore, dataDir: string, log: Log, env: NodeJS.ProcessEnv = process.env): BackupSchedule | undefined {
  if (!(store instanceof SqliteStore)) return undefined;
  const place = serviceBackupPlace(dataDir, env);
  const schedule = new BackupSchedule(
    () => store.backupTo(place),
    place,
    backupIntervalMs(env),
    (outcome) => {
      if (outcome.ok) log.info({ copia: outcome.backup.file }, 'cópia de segurança do banco do serviço feita e verificada');
      else log.error({ err: outcome.error }, `a cópia de segurança automática do banco do serviço falhou: ${faultWords(outcome.error, { path: place.dir })}`);
    },
  );
  schedule.start();
  return schedule;
}
