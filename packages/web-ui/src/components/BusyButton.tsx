import { Button, type ButtonProps } from 'react-aria-components';

/**
 * A button for a write in flight: disabled while `busy`, saying so in words. Not react-aria's `isPending`: its
 * progress announcer leaves an unnamed `role="img"` in the page, which axe reports as a serious violation.
 */
export function BusyButton({ busy, busyLabel, children, isDisabled, ...props }: Omit<ButtonProps, 'isPending' | 'children'> & { busy: boolean; busyLabel?: string; children: string }) {
  return (
    <Button {...props} isDisabled={busy || isDisabled}>
      {busy ? (busyLabel ?? `${children}…`) : children}
    </Button>
  );
}
