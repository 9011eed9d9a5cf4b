// The checkout screen's build: renderer/ → renderer/dist, with relative asset paths so the same
// files load from the browser-mode host (http://127.0.0.1:port/) and from Electron (file://).

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: './',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One small app on a local machine: no need to split it, and a single file keeps the CSP simple.
    modulePreload: false,
    target: 'es2022',
  },
});
