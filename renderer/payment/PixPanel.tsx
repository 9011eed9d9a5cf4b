// What the static and the dynamic PIX panels share: a heading with the amount, the BR Code large
// on the screen for the customer's phone (a placeholder until there is one), the facts the
// cashier may need to read out, and a closing line.

import { useId, type ReactNode } from 'react';
import { formatCents } from '../money/money.ts';
import { QrCode } from './QrCode.tsx';

export function PixPanel(props: {
  title: string;
  amountCents: number;
  /** The BR Code and whom it pays (the QR Code's accessible name), or the words shown meanwhile. */
  qr: { brCode: string; payee?: string } | { waiting: string };
  facts: readonly [term: string, value: ReactNode][];
  children?: ReactNode;
}) {
  const titleId = useId();
  const amount = formatCents(props.amountCents);
  return (
    <section className="pix-panel" aria-labelledby={titleId}>
      <h3 id={titleId}>
        {props.title}: {amount}
      </h3>
      {'brCode' in props.qr ? (
        <QrCode text={props.qr.brCode} label={`QR Code PIX de ${amount}${props.qr.payee ? ` para ${props.qr.payee}` : ''}`} />
      ) : (
        <p className="qr-code pix-waiting">{props.qr.waiting}</p>
      )}
      <dl className="pix-facts">
        {props.facts.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {props.children}
    </section>
  );
}
