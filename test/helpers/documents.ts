// A stored fiscal document as the authority would judge it: valid against its official schema,
// and its signature verifying (of the signed element: the document itself, or the one its proc
// wrapper holds first).

import { expect } from 'vitest';
import { validateXml, type SchemaName } from '../../fiscal/schema.ts';
import { verifyXmlSignature } from '../../fiscal/signature.ts';

/** The signed element of a stored document (NFe, MDFe, evento, eventoMDFe, inutNFe). */
export const signedPartOf = (xml: string): string =>
  /<(NFe|MDFe|evento|eventoMDFe|inutNFe)[\s>][\s\S]*?<\/\1>/.exec(xml.replace(/^<\?xml[^>]*>/, ''))?.[0] ?? xml;

export function expectValidAndSigned(xml: string | Buffer | undefined, schema: SchemaName, name: string): void {
  expect(xml, name).toBeDefined();
  const text = xml!.toString('utf8');
  expect(validateXml(text, schema).errors, `${name} contra ${schema}`).toEqual([]);
  expect(verifyXmlSignature(signedPartOf(text)), `assinatura de ${name}`).toMatchObject({ valid: true });
}
