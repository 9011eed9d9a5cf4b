// Static PIX (tPag 20, docs/pix.md): the BR Code large on the screen for the customer to scan;
// nothing tells the terminal the money arrived, so the cashier checks the store's bank app and
// confirms by hand (the receipt says so) with the payment dialog's "Confirmar recebimento do PIX".

import type { StaticPixView } from '../../electron/api/terminal-api.ts';
import { formatCents } from '../money/money.ts';
import { QrCode } from './QrCode.tsx';

export function StaticPixPanel({ pix }: { pix: StaticPixView }) {
  return (
    <section className="pix-panel" aria-labelledby="pix-static-title">
      <h3 id="pix-static-title">PIX Estático: {formatCents(pix.amountCents)}</h3>
      <QrCode text={pix.brCode} label={`QR Code PIX de ${formatCents(pix.amountCents)} para ${pix.merchantName}`} />
      <dl className="pix-facts">
        <div>
          <dt>Recebedor</dt>
          <dd>{pix.merchantName}</dd>
        </div>
        <div>
          <dt>Chave</dt>
          <dd>{pix.key}</dd>
        </div>
        <div>
          <dt>Referência</dt>
          <dd>{pix.reference}</dd>
        </div>
      </dl>
      <p className="pix-check">Confira no aplicativo do banco da loja que o PIX chegou antes de confirmar: o PIX estático não é confirmado pelo banco.</p>
    </section>
  );
}
