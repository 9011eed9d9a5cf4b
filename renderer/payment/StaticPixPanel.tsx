// Static PIX (tPag 20, docs/pix.md): the BR Code large on the screen for the customer to scan;
// nothing tells the terminal the money arrived, so the cashier checks the store's bank app and
// confirms by hand (the receipt says so) with the payment dialog's "Confirmar recebimento do PIX".

import type { StaticPixView } from '../../electron/api/terminal-api.ts';
import { PixPanel } from './PixPanel.tsx';

export function StaticPixPanel({ pix }: { pix: StaticPixView }) {
  return (
    <PixPanel
      title="PIX Estático"
      amountCents={pix.amountCents}
      qr={{ brCode: pix.brCode, payee: pix.merchantName }}
      facts={[
        ['Recebedor', pix.merchantName],
        ['Chave', pix.key],
        ['Referência', pix.reference],
      ]}
    >
      <p className="pix-check">Confira no aplicativo do banco da loja que o PIX chegou antes de confirmar: o PIX estático não é confirmado pelo banco.</p>
    </PixPanel>
  );
}
