import { useState } from 'react';
import { Button } from 'react-aria-components';

/** Copies `text` to the clipboard and says so (in words, announced) for two seconds. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | undefined>();
  return (
    <>
      <Button
        className="button"
        onPress={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setCopied('yes');
          } catch {
            setCopied('failed');
          }
          setTimeout(() => setCopied(undefined), 2000);
        }}
      >
        {label}
      </Button>
      <span role="status" className="muted">
        {copied === 'yes' ? 'Copied' : copied === 'failed' ? 'Could not copy: select the text and copy it' : ''}
      </span>
    </>
  );
}
