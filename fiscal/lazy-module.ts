// Packages that take tens of milliseconds to load and serve only some requests (a PDF, a PNG
// preview, a barcode, the municipality table) are loaded on their first use, so starting the
// service or a till does not pay for them. ESM has no synchronous lazy import; these packages
// ship CommonJS builds, which `require` loads on demand.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A getter that loads `name` on its first call and returns the same module ever after. */
export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
