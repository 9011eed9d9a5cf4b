// Where the XML test fixtures live (fiscal/testdata/xml; its README says what each one proves).

import { fileURLToPath } from 'node:url';

export const fixtureDir = fileURLToPath(new URL('./xml/', import.meta.url));

export const fixturePath = (name: string): string => fileURLToPath(new URL(`./xml/${name}`, import.meta.url));
