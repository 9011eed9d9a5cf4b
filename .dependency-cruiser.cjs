// Import cycles, checked by dependency-cruiser as part of `npm run lint`: a cycle inside a folder
// is as much a knot as one between folders, and a type-only import counts (tsPreCompilationDeps),
// since a module's types belong to one side. The direction between layers is ESLint's
// (eslint.layers.js); this file only forbids going round in circles.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Ciclo de importações: um módulo depende, direta ou indiretamente, de si mesmo. Extraia o que os dois compartilham para um módulo abaixo de ambos.',
      from: {},
      to: { circular: true },
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
