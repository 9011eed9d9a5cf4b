// The checkout screen's build: renderer/ → renderer/dist, with relative asset paths so the same
// files load from the browser-mode host (http://127.0.0.1:port/) and from Electron (file://).

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig(({ command }) => ({
  root: import.meta.dirname,
  base: './',
  plugins: [react()],
  // A build is always React's production build. Vite otherwise follows the NODE_ENV of the
  // process that builds, and a build made on the way by a test run (NODE_ENV=test) shipped
  // React's development build: twice the size, and slower on every render.
  define: command === 'build' ? { 'process.env.NODE_ENV': JSON.stringify('production') } : {},
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One small app on a local machine: no need to split it, and a single file keeps the CSP simple.
    modulePreload: false,
    target: 'es2022',
  },
}));
