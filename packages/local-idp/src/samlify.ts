/**
 * samlify, typed by what this package uses. Its own type declarations load the DOM library (through xmldom's), which
 * would change the global types of every program that imports this package (Web Crypto and fetch bodies stop
 * matching Node's), so the module is loaded without them.
 */
import { createRequire } from 'node:module';

interface Samlify {
  IdentityProvider(settings: {
    entityID: string;
    signingCert: string;
    nameIDFormat: string[];
    wantAuthnRequestsSigned: boolean;
    singleSignOnService: Array<{ Binding: string; Location: string }>;
  }): { getMetadata(): string };
  SamlLib: {
    constructSAMLSignature(options: {
      rawSamlMessage: string;
      privateKey: string;
      signingCert: string;
      signatureAlgorithm: string;
      isBase64Output: false;
      referenceTagXPath?: string;
      isMessageSigned?: boolean;
      signatureConfig: { prefix: string; location: { reference: string; action: 'after' } };
    }): string;
  };
  Utility: { inflateString(base64: string): string };
  Extractor: { extract(xml: string, fields: unknown[]): Record<string, unknown>; loginRequestFields: unknown[] };
}

const samlify = createRequire(import.meta.url)('samlify') as Samlify;
export default samlify;
