// Checked by dependency-cruiser as part of `npm run lint`, on resolved paths, type-only imports
// included (tsPreCompilationDeps), since a module's types belong to one side:
// - no import cycles: one inside a folder is as much a knot as one between folders;
// - inside service/, imports point one way: the composition on top (app, main, routes, the
//   commands), the document folders (nfce, nfe, mdfe, and terminals, the checkouts' registry)
//   side by side under it, each read routes → issuance → store, and the machinery they share
//   (authority, queue, webhooks, http, export and the modules at service/'s root) below them. Tests beside the code may reach anything.
// The direction between the top-level layers is ESLint's (eslint.layers.js).
const NOT_A_TEST = '\\.test\\.tsx?$';
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Ciclo de importações: um módulo depende, direta ou indiretamente, de si mesmo. Extraia o que os dois compartilham para um módulo abaixo de ambos.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'service-documents-side-by-side',
      severity: 'error',
      comment:
        'Uma pasta de documento do serviço (nfce, nfe, mdfe, terminals) não importa de outra: o que elas compartilham desce para queue/, http/, export/ ou a raiz de service/.',
      from: { path: '^service/(nfce|nfe|mdfe|terminals)/', pathNot: NOT_A_TEST },
      to: { path: '^service/(nfce|nfe|mdfe|terminals)/', pathNot: '^service/$1/' },
    },
    {
      name: 'service-machinery-below-documents',
      severity: 'error',
      comment: 'authority/, queue/, webhooks/, http/ e export/ ficam abaixo dos documentos: não importam de nfce/, nfe/, mdfe/ nem terminals/.',
      from: { path: '^service/(authority|queue|webhooks|http|export)/', pathNot: NOT_A_TEST },
      to: { path: '^service/(nfce|nfe|mdfe|terminals)/' },
    },
    {
      name: 'service-composition-on-top',
      severity: 'error',
      comment: 'A composição do serviço (app, main, routes, open-service, os comandos) fica no topo: nenhuma pasta de service/ a importa.',
      from: { path: '^service/[^/]+/', pathNot: NOT_A_TEST },
      to: { path: '^service/(app|main|routes|open-service|company-command|sefaz-command|archive-command)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|dist-electron|renderer/dist|test-output)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: false,
  },
};
