// Each fault of the machine the product meets, as Node and SQLite report it, in the words people
// read: the place named, what to do said, the system's code kept for the log.

import { describe, expect, it } from 'vitest';
import { faultWords, systemFault } from './system-faults.ts';

const errno = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(`${code}: system text`), { code, ...extra });

describe('systemFault', () => {
  it.each([
    ['ENOSPC', 'disco_cheio', /disco está cheio.*libere espaço/],
    ['SQLITE_FULL', 'disco_cheio', /disco está cheio/],
    ['EROFS', 'somente_leitura', /somente para leitura.*Libere a gravação/],
    ['SQLITE_READONLY_DBMOVED', 'somente_leitura', /somente para leitura/],
    ['EACCES', 'sem_permissao', /Sem permissão.*Ajuste as permissões/],
    ['EPERM', 'sem_permissao', /Sem permissão/],
    ['ENOENT', 'pasta_ausente', /não existe.*conecte-o/],
    ['SQLITE_CANTOPEN', 'pasta_ausente', /não existe/],
    ['EIO', 'falha_disco', /leitura ou gravação.*defeito/],
    ['SQLITE_IOERR_WRITE', 'falha_disco', /leitura ou gravação/],
  ])('%s is %s, in Portuguese, naming the place', (code, kind, words) => {
    const fault = systemFault(errno(code), { path: '/dados/loja' });
    expect(fault).toMatchObject({ kind, code });
    expect(fault!.message).toMatch(words);
    expect(fault!.message).toContain('/dados/loja');
  });

  it("names the path Node's error carries when the caller gives none", () => {
    expect(systemFault(errno('EACCES', { path: '/var/balcao/service.sqlite' }))!.message).toContain('/var/balcao/service.sqlite');
  });

  it('a port taken names the port and the option that changes it', () => {
    expect(systemFault(errno('EADDRINUSE'), { port: 8765, portOption: '--port' })!.message).toBe(
      'A porta 8765 já está em uso por outro programa: feche esse programa ou escolha outra porta (--port).',
    );
  });

  it('finds the code inside a wrapping error, and leaves alone what is not a fault of the machine', () => {
    expect(systemFault(new Error('outer', { cause: errno('ENOSPC') }))?.kind).toBe('disco_cheio');
    expect(systemFault(new TypeError('x is undefined'))).toBeUndefined();
    expect(systemFault(errno('SQLITE_CONSTRAINT_UNIQUE'))).toBeUndefined();
    expect(faultWords(new Error('outra coisa'))).toBe('outra coisa');
  });
});
