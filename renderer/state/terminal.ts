// The one terminal connection of this page, set at start-up (main.tsx) before anything renders.

import type { ScreenTerminal } from '../api/connect.ts';

let current: ScreenTerminal | null = null;

export function setTerminal(terminal: ScreenTerminal): void {
  current = terminal;
}

export function terminal(): ScreenTerminal {
  if (!current) throw new Error('terminal não conectado');
  return current;
}
