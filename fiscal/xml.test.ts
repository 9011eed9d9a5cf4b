import { describe, expect, it } from 'vitest';
import { el, escapeXml, firstText, text, unescapeXml } from './xml.ts';

describe('xml writer', () => {
  it('escapes user text exactly once and keeps accents', () => {
    const xml = el('prod', undefined, text('xProd', 'Pão & "Café" <200g> d\'água'));
    expect(xml).toBe('<prod><xProd>Pão &amp; &quot;Café&quot; &lt;200g&gt; d&#39;água</xProd></prod>');
    expect(escapeXml('&amp;')).toBe('&amp;amp;'); // text is raw: an entity typed by a user stays visible
    expect(firstText(xml, 'xProd')).toBe('Pão & "Café" <200g> d\'água');
  });

  it('skips absent optional children and attributes', () => {
    expect(el('a', { x: '1', y: undefined }, undefined, text('b', undefined), false, text('c', 0))).toBe('<a x="1"><c>0</c></a>');
  });

  it('unescapes numeric references', () => {
    expect(unescapeXml('&#233;&#xE7;&lt;')).toBe('éç<');
  });
});
