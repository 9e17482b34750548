import type { ReactNode } from 'react';
import { Button, Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';

/**
 * A button that opens a modal dialog (focus moves in, Escape closes, focus returns to the button). `children` gets
 * `close` to end the dialog after its action succeeded.
 */
export function DialogButton({ label, title, children, variant = 'button' }: { label: string; title: string; variant?: 'button' | 'button button-primary' | 'button button-danger'; children: (close: () => void) => ReactNode }) {
  return (
    <DialogTrigger>
      <Button className={variant === 'button' ? 'button' : variant}>{label}</Button>
      <ModalOverlay isDismissable>
        <Modal>
          <Dialog>
            {({ close }) => (
              <>
                <Heading slot="title">{title}</Heading>
                {children(close)}
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

/** A confirmation for what cannot be undone (revoke, void, remove): the action's own words on the button. */
export function ConfirmButton({ label, title, description, confirmLabel, onConfirm, error }: { label: string; title: string; description: ReactNode; confirmLabel: string; onConfirm: () => Promise<void>; error?: ReactNode }) {
  return (
    <DialogButton label={label} title={title}>
      {(close) => (
        <>
          <div>{description}</div>
          {error}
          <div className="dialog-actions">
            <Button className="button" slot="close">
              Cancel
            </Button>
            <Button
              className="button button-danger"
              onPress={async () => {
                try {
                  await onConfirm();
                  close();
                } catch {
                  // onConfirm shows its own error (the `error` prop); the dialog stays open.
                }
              }}
            >
              {confirmLabel}
            </Button>
          </div>
        </>
      )}
    </DialogButton>
  );
}
