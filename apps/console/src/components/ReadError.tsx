import { BusyButton, FormError } from '@sigil/web-ui';

/**
 * A read that failed, said with the API's words (an `ApiError`, as `refusalOf` makes of a GraphQL error) and a
 * button that reads again; while that read runs the button says so.
 */
export function ReadError({ error, retrying, onRetry }: { error: unknown; retrying: boolean; onRetry(): void }) {
  return (
    <div className="read-error">
      <FormError error={error} />
      <BusyButton className="button" busy={retrying} busyLabel="Trying again…" onPress={onRetry}>
        Try again
      </BusyButton>
    </div>
  );
}
