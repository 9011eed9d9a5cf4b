// The `balcao` command: one subcommand per part of the product. Each subcommand module is loaded
// only when asked for, so `balcao --help` stays fast and a broken part does not break the others.

type Subcommand = { summary: string; load: () => Promise<{ run(args: string[]): Promise<number> }> };

const subcommands: Record<string, Subcommand> = {
  start: { summary: 'Inicia a loja de demonstração (o que npm start executa)', load: () => import('./start.ts') },
  service: { summary: 'Inicia o serviço de emissão (API HTTP de NFC-e, NF-e de devolução e MDF-e)', load: () => import('../service/main.ts') },
  company: {
    summary: 'Empresas do serviço de emissão: cadastro, alteração e novo token (company create|update|token)',
    load: () => import('../service/company-command.ts'),
  },
  ibscbs: {
    summary: 'Alíquotas do IBS/CBS do operador para todas as empresas (ibscbs aliquotas|status)',
    load: () => import('../service/ibscbs-command.ts'),
  },
  'responsavel-tecnico': {
    summary: 'Responsável técnico (infRespTec e CSRT) de todos os documentos do serviço (definir|mostrar|remover)',
    load: () => import('../service/resp-tec-command.ts'),
  },
  arquivar: {
    summary: 'Arquiva as NFC-e de um mês fora do prazo legal (ZIP verificado) e as tira do banco do serviço',
    load: () => import('../service/archive-command.ts'),
  },
  sefaz: { summary: 'SEFAZ real: status dos serviços para a UF e o ambiente da empresa (sefaz status)', load: () => import('../service/sefaz-command.ts') },
  terminal: { summary: 'Núcleo do terminal sem tela: vendas em lote, cadastro de gerente', load: () => import('../electron/core/terminal-process.ts') },
  backup: {
    summary: 'Cópia de segurança agora dos bancos da pasta de dados (terminal e serviço), verificada',
    load: async () => ({ run: (await import('./backup.ts')).runBackup }),
  },
  restore: {
    summary: 'Lista as cópias de segurança, ou põe uma de volta (com a loja fechada)',
    load: async () => ({ run: (await import('./backup.ts')).runRestore }),
  },
};

function usage(): string {
  const lines = Object.entries(subcommands).map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`);
  return ['Uso: balcao <comando> [opções]', '', 'Comandos:', ...(lines.length ? lines : ['  (nenhum comando disponível ainda)']), ''].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return 0;
  }
  const sub = subcommands[name];
  if (!sub) {
    process.stderr.write(`Comando desconhecido: ${name}\n\n${usage()}`);
    return 2;
  }
  const mod = await sub.load();
  return mod.run(rest);
}
