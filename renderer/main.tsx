// Start-up: connect to the terminal (Electron bridge or browser-mode host), wire its events into
// the stores, pick up a sale left open, and render.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { connectTerminal, NoTerminalError } from './api/connect.ts';
import { App } from './app/App.tsx';
import { loadCash } from './state/cash-store.ts';
import { wireEvents } from './state/events.ts';
import { resumeSale } from './state/sale-store.ts';
import { setTerminal } from './state/terminal.ts';
import './styles.css';

const root = createRoot(document.getElementById('root')!);

try {
  const api = connectTerminal();
  setTerminal(api);
  wireEvents(api);
  void resumeSale();
  void loadCash();
  root.render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
} catch (err) {
  if (!(err instanceof NoTerminalError)) throw err;
  root.render(
    <main className="no-terminal">
      <h1>Balcão</h1>
      <p role="alert">{err.message}</p>
    </main>,
  );
}
