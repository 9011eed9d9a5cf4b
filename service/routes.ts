// The document endpoints mounted under /api/v1, behind authentication. Each document type
// (NFC-e, MDF-e, NF-e de devolução), the terminals registry and the PIX received add their plugin to this list;
// buildApp registers each one with the service dependencies. A plugin that needs background work (a queue, the restart
// recovery of its idempotency keys) starts it in an onReady hook and stops it in onClose.

import { mdfeRoutes } from './mdfe/routes.ts';
import { nfceRoutes } from './nfce/routes.ts';
import { nfeRoutes } from './nfe/routes.ts';
import { pixRoutes } from './pix/routes.ts';
import { terminalRoutes } from './terminals/routes.ts';
import type { ApiRoutes } from './http/type-provider.ts';

export const documentRoutes: readonly ApiRoutes[] = [nfceRoutes, mdfeRoutes, nfeRoutes, terminalRoutes, pixRoutes];
