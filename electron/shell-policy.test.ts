import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_INDEX_URL, ELECTRON_CSP, isAppUrl, resolveAppFile, secureWebPreferences, shellOptions, useKeychain } from './shell-policy.ts';

const root = '/opt/balcao/renderer/dist';

describe('the screen origin', () => {
  it('recognizes only balcao://app URLs', () => {
    expect(isAppUrl(APP_INDEX_URL)).toBe(true);
    expect(isAppUrl('balcao://app/assets/x.js?v=1#y')).toBe(true);
    for (const url of [
      'file:///opt/balcao/renderer/dist/index.html',
      'balcao://outro/index.html',
      'https://app/index.html',
      'balcao://user:pw@app/',
      'about:blank',
      '',
      null,
      undefined,
      'não é url',
    ]) {
      expect(isAppUrl(url), String(url)).toBe(false);
    }
  });

  it('maps URLs to files inside the screen folder and nothing outside it', () => {
    expect(resolveAppFile(root, 'balcao://app/')).toBe(join(root, 'index.html'));
    expect(resolveAppFile(root, 'balcao://app/index.html')).toBe(join(root, 'index.html'));
    expect(resolveAppFile(root, 'balcao://app/assets/index-abc.js?x=1')).toBe(join(root, 'assets', 'index-abc.js'));
    expect(resolveAppFile(root, 'balcao://app/assets/caf%C3%A9.png')).toBe(join(root, 'assets', 'café.png'));
    for (const url of [
      'balcao://app/../../../etc/passwd',
      'balcao://app/%2e%2e/%2e%2e/etc/passwd',
      'balcao://app/assets/..%2f..%2f..%2fetc%2fpasswd',
      'balcao://app/%2F%2Fetc/passwd/..%2F..%2F..%2F..%2F',
      'balcao://app/a%00.js',
      'balcao://app/..%5c..%5csecret',
      'balcao://app/%E0%A4%A',
      'balcao://outro/index.html',
      'file:///etc/passwd',
    ]) {
      const file = resolveAppFile(root, url);
      if (file !== null) expect(file.startsWith(`${root}/`), `${url} → ${file}`).toBe(true);
      else expect(file).toBeNull();
    }
    expect(resolveAppFile(root, 'balcao://app/../../../etc/passwd')).not.toBe('/etc/passwd');
    expect(resolveAppFile(root, 'balcao://app/assets/..%2f..%2f..%2fetc%2fpasswd')).toBeNull();
  });
});

describe('window and policy', () => {
  it('gives the renderer no Node and an isolated, sandboxed context', () => {
    expect(secureWebPreferences('/x/preload.cjs')).toMatchObject({
      preload: '/x/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  it('allows only our own scripts and no plugins, framing or inline code', () => {
    expect(ELECTRON_CSP).toContain("default-src 'self'");
    expect(ELECTRON_CSP).toContain("script-src 'self'");
    expect(ELECTRON_CSP).toContain("object-src 'none'");
    expect(ELECTRON_CSP).toContain("frame-ancestors 'none'");
    expect(ELECTRON_CSP).not.toMatch(/unsafe-(inline|eval)/);
  });

  it('reads kiosk mode, the data folder and the first-start seed from argv and env', () => {
    expect(shellOptions(['electron', '.'], {}, '/home/caixa/.config/Balcão')).toEqual({
      kiosk: false,
      dataDir: '/home/caixa/.config/Balcão/terminal',
      seed: {},
    });
    expect(
      shellOptions(
        ['electron', '.', '--kiosk'],
        { BALCAO_DATA: '/srv/pdv', BALCAO_SERVICE_URL: 'https://10.0.0.2:8765', BALCAO_TOKEN: 'blc_x', BALCAO_SERIE: '3', BALCAO_SERVICE_FINGERPRINT: 'AB:CD' },
        '/u',
      ),
    ).toEqual({ kiosk: true, dataDir: '/srv/pdv', seed: { serviceUrl: 'https://10.0.0.2:8765', token: 'blc_x', series: 3, serviceFingerprint: 'AB:CD' } });
    expect(shellOptions([], { BALCAO_KIOSK: '1' }, '/u').kiosk).toBe(true);
    expect(() => shellOptions([], { BALCAO_SERIE: 'um' }, '/u')).toThrow(/BALCAO_SERIE/);
  });
});

describe('the keychain for secrets at rest', () => {
  it("uses a real OS keychain, never Linux's basic_text fallback (a password built into Electron)", () => {
    expect(useKeychain({ platform: 'win32', available: true })).toBe(true);
    expect(useKeychain({ platform: 'darwin', available: true })).toBe(true);
    expect(useKeychain({ platform: 'linux', available: true, linuxBackend: 'gnome_libsecret' })).toBe(true);
    expect(useKeychain({ platform: 'linux', available: true, linuxBackend: 'kwallet5' })).toBe(true);
    expect(useKeychain({ platform: 'linux', available: true, linuxBackend: 'basic_text' })).toBe(false);
    expect(useKeychain({ platform: 'linux', available: true, linuxBackend: 'unknown' })).toBe(false);
    expect(useKeychain({ platform: 'win32', available: false })).toBe(false);
  });
});
