// Tabs as the WAI-ARIA tabs pattern has them: one tab stop for the whole list (the selected tab),
// the arrows move to the previous or next tab and show it (automatic activation), Home and End to
// the first and last. The selected tab is where a dialog puts the focus back (data-autofocus).

import { useId, useRef, type ReactNode } from 'react';

export function Tabs<Id extends string>(props: {
  label: string;
  tabs: readonly { id: Id; label: string }[];
  selected: Id;
  onSelect: (id: Id) => void;
  children: ReactNode;
}) {
  const { label, tabs, selected, onSelect, children } = props;
  const prefix = useId();
  const list = useRef<HTMLDivElement>(null);
  const tabId = (id: Id) => `${prefix}-tab-${id}`;
  const panelId = `${prefix}-panel`;

  const onKeyDown = (e: React.KeyboardEvent) => {
    const at = tabs.findIndex((t) => t.id === selected);
    const to =
      e.key === 'ArrowRight'
        ? (at + 1) % tabs.length
        : e.key === 'ArrowLeft'
          ? (at - 1 + tabs.length) % tabs.length
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? tabs.length - 1
              : -1;
    if (to < 0) return;
    e.preventDefault();
    onSelect(tabs[to]!.id);
    list.current?.querySelector<HTMLElement>(`#${CSS.escape(tabId(tabs[to]!.id))}`)?.focus();
  };

  return (
    <>
      <div ref={list} className="tabs" role="tablist" aria-label={label} onKeyDown={onKeyDown}>
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={tabId(t.id)}
            aria-selected={t.id === selected}
            aria-controls={panelId}
            tabIndex={t.id === selected ? 0 : -1}
            data-autofocus={t.id === selected || undefined}
            className={t.id === selected ? 'tab selected' : 'tab'}
            onClick={() => onSelect(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div id={panelId} role="tabpanel" aria-labelledby={tabId(selected)}>
        {children}
      </div>
    </>
  );
}
