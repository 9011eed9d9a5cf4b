// The one way out of a manager action once it has been sent: back to the receipts list, focused
// so that Enter takes the cashier there.

export function BackToReceipts({ onBack }: { onBack: () => void }) {
  return (
    <div className="dialog-actions">
      <button type="button" className="primary" autoFocus onClick={onBack}>
        Voltar aos recibos
      </button>
    </div>
  );
}
