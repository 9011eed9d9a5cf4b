// What the accessibility e2e test looks at in the page: a third-party WCAG checker's verdict
// (axe-core, run inside the page), whether something the cashier needs is really in view (its
// box inside the window and nothing drawn over it), whether anything scrolls sideways, what has
// the focus, and what the browser's accessibility tree holds in its live regions (read over the
// DevTools protocol, as a screen reader gets it).

import axe from 'axe-core';
import type { CDPSession, Locator, Page } from 'playwright-core';

/** The rules run: WCAG 2.0 and 2.1, levels A and AA. */
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
export const AXE_VERSION = axe.version;

export type AuditFinding = { rule: string; impact: string; help: string; targets: string[] };

/**
 * axe-core over the whole page as it is now. Injected through the DevTools protocol (the page's
 * CSP forbids inline scripts, which does not apply there); returns every violation found.
 */
export async function runAxe(page: Page): Promise<AuditFinding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source);
  const violations = await page.evaluate(async (tags) => {
    const w = window as unknown as { axe: typeof axe };
    const result = await w.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({ rule: v.id, impact: v.impact ?? 'minor', help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  }, WCAG_TAGS);
  return violations;
}

/** Serious and critical: what the issue asks to be none of. */
export const blocking = (findings: AuditFinding[]): AuditFinding[] => findings.filter((f) => f.impact === 'serious' || f.impact === 'critical');

/**
 * Why `locator` is not fully seen, or null when it is: its box is inside the window, and at its
 * centre and near each corner (in by up to 8 px, past a rounded border) the element the browser
 * finds there is it or inside it (another element drawn over it, or a container clipping it,
 * would be found instead).
 */
export async function notInView(locator: Locator): Promise<string | null> {
  return locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const name = (e: Element | null) => (e ? `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).split(' ').join('.')}` : ''}` : 'nada');
    if (r.width === 0 || r.height === 0) return 'sem tamanho';
    if (r.left < -0.5 || r.top < -0.5 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5)
      return `fora da janela ${innerWidth}×${innerHeight}: [${Math.round(r.left)}, ${Math.round(r.top)}, ${Math.round(r.right)}, ${Math.round(r.bottom)}]`;
    const dx = Math.min(8, r.width / 4);
    const dy = Math.min(8, r.height / 4);
    const points: [number, number][] = [
      [r.left + r.width / 2, r.top + r.height / 2],
      [r.left + dx, r.top + dy],
      [r.right - dx, r.top + dy],
      [r.left + dx, r.bottom - dy],
      [r.right - dx, r.bottom - dy],
    ];
    for (const [x, y] of points) {
      const hit = document.elementFromPoint(x, y);
      if (!hit || !(hit === el || el.contains(hit))) return `coberto em (${Math.round(x)}, ${Math.round(y)}) por ${name(hit)}`;
    }
    return null;
  });
}

/** What scrolls sideways: the page, or the open dialog's body, with the element that sticks out furthest. Empty when nothing does. */
export async function sideways(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const widest = (box: Element) => {
      const edge = box.getBoundingClientRect().left + box.clientWidth;
      let worst: Element | null = null;
      for (const el of Array.from(box.querySelectorAll('*'))) {
        if (el.getBoundingClientRect().right > edge + 1 && (!worst || el.getBoundingClientRect().right > worst.getBoundingClientRect().right)) worst = el;
      }
      return worst ? `${worst.tagName.toLowerCase()}.${String(worst.className).split(' ').join('.')} «${(worst.textContent ?? '').slice(0, 30)}»` : '?';
    };
    const root = document.scrollingElement!;
    if (root.scrollWidth > root.clientWidth + 1) found.push(`a página (${root.scrollWidth} > ${root.clientWidth}: ${widest(document.body)})`);
    for (const body of Array.from(document.querySelectorAll('.dialog-body, .dialog-band'))) {
      if (body.scrollWidth > body.clientWidth + 1) found.push(`o diálogo (${body.scrollWidth} > ${body.clientWidth}: ${widest(body)})`);
    }
    return found;
  });
}

/** The focused element as a person would name it: its role-ish tag and its label or text. */
export async function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return 'body';
    const label =
      el.getAttribute('aria-label') ??
      (el.id ? document.querySelector(`label[for="${CSS.escape(el.id)}"]`)?.textContent : null) ??
      el.closest('label')?.querySelector('span')?.textContent ??
      el.textContent ??
      '';
    const role = el.getAttribute('role') ?? el.tagName.toLowerCase();
    return `${role}: ${label.replace(/\s+/g, ' ').trim()}`;
  });
}

type AxNode = {
  nodeId: string;
  ignored: boolean;
  role?: { value: string };
  name?: { value: string };
  properties?: { name: string; value: { value: unknown } }[];
  childIds?: string[];
};

/**
 * The live regions of the browser's accessibility tree (role log, status or alert, or any node
 * with a live property), each with its politeness and the text of its descendants.
 */
export async function liveRegions(cdp: CDPSession): Promise<{ role: string; live: string; text: string }[]> {
  const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: AxNode[] };
  const byId = new Map(nodes.map((n) => [n.nodeId, n]));
  const textOf = (n: AxNode): string =>
    n.role?.value === 'StaticText'
      ? (n.name?.value ?? '')
      : (n.childIds ?? [])
          .map((id) => byId.get(id))
          .filter((c): c is AxNode => !!c)
          .map(textOf)
          .join(' ');
  const regions = nodes.filter((n) => !n.ignored && ['log', 'status', 'alert'].includes(n.role?.value ?? ''));
  return regions.map((n) => ({
    role: n.role!.value,
    live: String(n.properties?.find((p) => p.name === 'live')?.value.value ?? ''),
    text: textOf(n).replace(/\s+/g, ' ').trim(),
  }));
}
