// Types for the parts of the `ipp-encoder` package (plain JavaScript, no types of its own) that
// system-queue.ts uses: the IPP message as it encodes and decodes it.

declare module 'ipp-encoder' {
  type IppValue = string | number | boolean | Date | { lang: string; value: string };
  type IppAttribute = { tag: number; name: string; value: IppValue | IppValue[] };
  type IppGroup = { tag: number; attributes: IppAttribute[] };
  type IppVersion = { major: number; minor: number };

  export type IppRequest = { version?: IppVersion; operationId: number; requestId: number; groups: IppGroup[]; data?: Buffer };
  export type IppResponse = {
    version: IppVersion;
    statusCode: number;
    requestId: number;
    groups: { tag: number; attributes: { tag: number; name: string; value: IppValue[] }[] }[];
  };

  const ipp: {
    CONSTANTS: Record<string, number>;
    STATUS_CODES: Record<number, string>;
    request: { encode(message: IppRequest): Buffer };
    response: { decode(buffer: Buffer): IppResponse };
  };
  export default ipp;
}
