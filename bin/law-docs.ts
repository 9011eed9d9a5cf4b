// Writes the law table (fiscal/law/table.ts) into docs/fiscal.md, "The law by date": `npm run docs:law`.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withLawTable } from '../fiscal/law/markdown.ts';

const file = fileURLToPath(new URL('../docs/fiscal.md', import.meta.url));
const before = readFileSync(file, 'utf8');
const after = withLawTable(before);
if (after !== before) writeFileSync(file, after);
console.log(after === before ? 'docs/fiscal.md: a tabela da lei já está em dia' : 'docs/fiscal.md: tabela da lei atualizada');
