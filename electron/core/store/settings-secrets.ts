// The terminal's settings (JSON by key) and its secrets, sealed before they get here (settings.ts).

import { StorePart } from './database.ts';

export class SettingsStore extends StorePart {
  settingValue(key: string): string | undefined {
    return this.st('SELECT value FROM settings WHERE key = ?').pluck().get(key) as string | undefined;
  }

  putSetting(key: string, json: string, at: string): void {
    this.st(
      'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    ).run(key, json, at);
  }

  deleteSetting(key: string): void {
    this.st('DELETE FROM settings WHERE key = ?').run(key);
  }

  sealedSecret(name: string): Buffer | undefined {
    return this.st('SELECT sealed FROM secrets WHERE name = ?').pluck().get(name) as Buffer | undefined;
  }

  putSealedSecret(name: string, sealed: Buffer, at: string): void {
    this.st(
      'INSERT INTO secrets (name, sealed, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at',
    ).run(name, sealed, at);
  }

  deleteSecret(name: string): void {
    this.st('DELETE FROM secrets WHERE name = ?').run(name);
  }
}
