// Electron: electron/preload.ts exposes `window.balcao`; the events flow for as long as the
// window lives, so the link is always up.

import type { ElectronBridge } from '../../electron/api/bridge-protocol.ts';
import type { Carrier } from './carrier.ts';

declare global {
  interface Window {
    balcao?: ElectronBridge;
  }
}

export function electronBridge(): ElectronBridge | undefined {
  return typeof window !== 'undefined' ? window.balcao : undefined;
}

export function electronCarrier(bridge: ElectronBridge): Carrier {
  return {
    call: (method, args) => bridge.call(method, args),
    onEvent: (listener) => bridge.onEvent(listener),
    onLink: (listener) => {
      listener('up');
      return () => {};
    },
    // The native save dialog, in the main process (electron/main.ts): any folder, a USB stick.
    saveExport: (fileName) => bridge.saveExport(fileName),
  };
}
