import { CopyButton } from '@sigil/web-ui';

interface DocumentsEnvelope {
  id: string;
  status: string;
  seal: string;
  sealing?: { sealedSha256?: string | null } | null;
}

const documentUrl = (id: string, version: 'original' | 'sealed' | 'certificate') => `/v1/envelopes/${encodeURIComponent(id)}/document?version=${version}`;

/**
 * The envelope's PDFs: the original once prepared, the sealed document and the certificate of completion once sealed;
 * and the public verification page of the sealed document (anyone can check it there, without an account).
 */
export function Documents({ envelope }: { envelope: DocumentsEnvelope }) {
  const prepared = envelope.status !== 'rendering';
  const sealed = envelope.seal === 'sealed';
  const sha256 = envelope.sealing?.sealedSha256;
  const verifyUrl = sha256 ? `${window.location.origin}/verify#sha256=${sha256}` : undefined;
  return (
    <section aria-labelledby="env-documents">
      <h2 id="env-documents">Documents</h2>
      <ul className="env-docs">
        <li>
          {prepared ? <a href={documentUrl(envelope.id, 'original')} download={`${envelope.id}-original.pdf`}>Original PDF</a> : <span className="muted">Original PDF: being prepared…</span>}
        </li>
        <li>
          {sealed ? <a href={documentUrl(envelope.id, 'sealed')} download={`${envelope.id}-sealed.pdf`}>Sealed PDF</a> : <span className="muted">Sealed PDF: once everyone has signed and the seal is applied</span>}
        </li>
        <li>
          {sealed ? <a href={documentUrl(envelope.id, 'certificate')} download={`${envelope.id}-certificate.pdf`}>Certificate of completion</a> : <span className="muted">Certificate of completion: with the sealed PDF</span>}
        </li>
      </ul>
      {sealed && verifyUrl && (
        <>
          <h3>Public verification</h3>
          <p className="muted">Anyone holding the sealed PDF can check it here, without an account.</p>
          <div className="secret env-verify">
            <a href={verifyUrl} className="env-hash">
              {verifyUrl}
            </a>
            <CopyButton text={verifyUrl} label="Copy verification link" />
          </div>
        </>
      )}
    </section>
  );
}
