// The one input the counter lives in: "Código ou nome do produto". A scanner types digits and
// Enter; `3*7891000100103` (or the quantity field) sets the quantity; letters search the catalog
// and the results are picked with the arrows and Enter. With the input empty, the arrows move
// through the sale's lines, Delete removes the selected one and * changes its quantity.

import { useEffect, useId, useRef, useState } from 'react';
import type { ProductView } from '../../electron/api/terminal-api.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import type { InputError } from '../money/money.ts';
import { formatCents, looksLikeCode, parseEntry, parseQuantity } from '../money/money.ts';
import { addItem, moveSelection, removeItem, selectedLine, takePrefill, useSale } from '../state/sale-store.ts';
import { terminal } from '../state/terminal.ts';
import { openDialog, useUi } from '../state/ui-store.ts';

const SEARCH_DELAY_MS = 120;

/** "*" typed first (nothing else in the input) with a line selected: its quantity is changed. */
function editSelectedQuantity(typed: string): boolean {
  const line = typed === '' ? selectedLine() : null;
  if (line) openDialog({ kind: 'quantity', itemId: line.id });
  return line !== null;
}

function isEditable(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || (el as HTMLElement).isContentEditable;
}

export function ProductEntry(props: { inputRef: React.RefObject<HTMLInputElement | null>; quantityRef: React.RefObject<HTMLInputElement | null> }) {
  const { inputRef, quantityRef } = props;
  const [text, setText] = useState(takePrefill);
  const [quantity, setQuantity] = useState('1');
  const [results, setResults] = useState<ProductView[]>([]);
  const [active, setActive] = useState(-1);
  const [inputError, setInputError] = useState<string | null>(null);
  const listId = useId();
  const searchSeq = useRef(0);
  const dialogOpen = useUi((s) => s.dialog.kind !== 'none');

  // Keys typed while focus sits on a button or the page (a scanner does not aim) go to the input.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (dialogOpen || e.ctrlKey || e.altKey || e.metaKey || isEditable(document.activeElement)) return;
      if (e.key.length === 1 && e.key !== ' ') {
        e.preventDefault();
        inputRef.current?.focus();
        if (e.key === '*' && editSelectedQuantity(inputRef.current?.value ?? '')) return;
        setText((t) => t + e.key);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [dialogOpen, inputRef]);

  const search = (term: string) => {
    const seq = ++searchSeq.current;
    if (term.length < 2 || looksLikeCode(term)) {
      setResults([]);
      setActive(-1);
      return;
    }
    setTimeout(async () => {
      if (seq !== searchSeq.current) return;
      try {
        const found = await terminal().findProducts(term, 8);
        if (seq !== searchSeq.current) return;
        setResults(found);
        setActive(found.length ? 0 : -1);
      } catch {
        setResults([]);
      }
    }, SEARCH_DELAY_MS);
  };

  const reset = () => {
    searchSeq.current++;
    setText('');
    setResults([]);
    setActive(-1);
    setQuantity('1');
  };

  const add = (code: string, qtyFromText: string | null) => {
    let qty = qtyFromText;
    try {
      if (qty === null && quantity.trim() !== '' && quantity.trim() !== '1') qty = parseQuantity(quantity);
    } catch (err) {
      setInputError((err as InputError).message);
      return;
    }
    setInputError(null);
    reset();
    void addItem(code, qty);
  };

  const onChange = (value: string) => {
    setText(value);
    setInputError(null);
    try {
      search(parseEntry(value).term);
    } catch {
      search('');
    }
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const step = e.key === 'ArrowDown' ? 1 : -1;
      if (results.length) setActive((a) => Math.max(0, Math.min(results.length - 1, a + step)));
      else moveSelection(step);
      return;
    }
    if (e.key === 'Escape') {
      reset();
      return;
    }
    if (e.key === '*' && editSelectedQuantity(text)) {
      e.preventDefault();
      return;
    }
    if (e.key === 'Delete' && text === '') {
      const { selectedItemId } = useSale.getState();
      if (selectedItemId !== null) {
        e.preventDefault();
        void removeItem(selectedItemId);
      }
      return;
    }
    if (e.key !== 'Enter') return;
    e.preventDefault();
    let entry: ReturnType<typeof parseEntry>;
    try {
      entry = parseEntry(text);
    } catch (err) {
      setInputError((err as InputError).message);
      return;
    }
    const picked = results[active];
    if (picked && !looksLikeCode(entry.term)) return add(picked.code, entry.quantity);
    if (entry.term === '') return;
    if (looksLikeCode(entry.term)) return add(entry.term, entry.quantity);
    // A name typed faster than the search: look it up now; one match is added, several listed.
    void terminal()
      .findProducts(entry.term, 8)
      .then((found) => {
        if (found.length === 1) add(found[0]!.code, entry.quantity);
        else if (found.length === 0) setInputError(`Nenhum produto encontrado para “${entry.term}”`);
        else {
          setResults(found);
          setActive(0);
        }
      });
  };

  const expanded = results.length > 0;
  const optionId = (i: number) => `${listId}-${i}`;

  return (
    <div className="entry">
      <div className="entry-row">
        <label className="field grow">
          <span>Código ou nome do produto</span>
          <input
            ref={inputRef}
            className="big-input"
            role="combobox"
            aria-expanded={expanded}
            aria-controls={listId}
            aria-autocomplete="list"
            aria-activedescendant={expanded && active >= 0 ? optionId(active) : undefined}
            autoComplete="off"
            spellCheck={false}
            value={text}
            onChange={(e) => onChange(e.target.value)}
            onKeyDown={onKeyDown}
          />
        </label>
        <label className="field quantity">
          <span>
            Quantidade <kbd>F3</kbd>
          </span>
          <input
            ref={quantityRef}
            className="big-input"
            inputMode="decimal"
            autoComplete="off"
            value={quantity}
            onChange={(e) => setQuantity(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                inputRef.current?.focus();
              }
            }}
          />
        </label>
      </div>
      <ul id={listId} role="listbox" aria-label="Produtos encontrados" className={expanded ? 'results' : 'results hidden'}>
        {results.map((p, i) => (
          <li
            key={p.code}
            id={optionId(i)}
            role="option"
            aria-selected={i === active}
            className={i === active ? 'active' : undefined}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => add(p.code, null)}
          >
            <span className="result-name">{p.description}</span>
            <span className="result-code">{p.gtin === 'SEM GTIN' ? `cód. ${p.code}` : p.gtin}</span>
            <span className="result-price">
              {formatCents(p.priceCents)}/{p.unit}
            </span>
          </li>
        ))}
      </ul>
      <ErrorAlert error={inputError} />
    </div>
  );
}
