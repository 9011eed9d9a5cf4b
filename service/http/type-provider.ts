// The TypeBox type provider (the package that ships one is not installed): with it, a route's
// TypeBox schemas type its request and reply, so the schema is written once and checked twice.

import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyTypeProvider, RawServerDefault } from 'fastify';
import type { ServiceDeps } from '../deps.ts';

export interface TypeBoxTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
  serializer: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
}

/**
 * A group of routes mounted under /api/v1, behind authentication (request.company is set).
 * Registered by buildApp with the service dependencies; the seam for document types.
 */
export type ApiRoutes = FastifyPluginAsync<{ deps: ServiceDeps }, RawServerDefault, TypeBoxTypeProvider>;

/** The Fastify instance an ApiRoutes plugin registers its routes on (for the functions it splits into). */
export type ApiApp = Parameters<ApiRoutes>[0];
