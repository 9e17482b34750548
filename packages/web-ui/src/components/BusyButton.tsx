import { Button, type ButtonProps } from 'react-aria-components';

/**
 * A button for a write that takes a moment: while `busy` it says so ("Saving…"), and while `blocked` (its own write or
 * another one runs; `busy` by default) it ignores presses and says so (aria-disabled), a submit button no longer
 * submitting. It is never disabled for that: a disabled button drops the keyboard focus (to the document's body, from
 * where Tab starts again at the top) and a screen reader loses its place. `isDisabled` is for what may not be done at
 * all. Not react-aria's `isPending`: its progress announcer leaves an unnamed `role="img"`, which axe reports.
 */
export function BusyButton({ busy, busyLabel, blocked = busy, children, onPress, type, ...props }: Omit<ButtonProps, 'isPending' | 'children'> & { busy: boolean; busyLabel?: string; blocked?: boolean; children: string }) {
  return (
    <Button {...props} type={blocked && type === 'submit' ? 'button' : type} aria-disabled={blocked || undefined} onPress={blocked ? undefined : onPress}>
      {busy ? (busyLabel ?? `${children}…`) : children}
    </Button>
  );
}
