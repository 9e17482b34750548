import { useState } from 'react';
import { Button, Form } from 'react-aria-components';
import { BusyButton, Field, FormError, useAction } from '@sigil/web-ui';
import { CheckboxField, Worded } from './fields.tsx';
import { EVENT_WORDS, SUBSCRIBABLE_EVENTS, type WebhookEventType } from './words.ts';

export interface EndpointInput {
  url: string;
  description: string;
  events: WebhookEventType[];
}

const FIELDS = ['/body/url', '/body/description', '/body/events'];

/**
 * URL, description and events of an endpoint (create and edit). The API checks the URL (public https only, never a
 * private address): its refusal shows under the URL field, where its pointer `/body/url` says.
 */
export function EndpointForm({ initial, submitLabel, onSubmit, close }: { initial: EndpointInput; submitLabel: string; onSubmit: (input: EndpointInput) => Promise<void>; close: () => void }) {
  const [url, setUrl] = useState(initial.url);
  const [description, setDescription] = useState(initial.description);
  const [events, setEvents] = useState<string[]>(initial.events);
  const action = useAction();
  return (
    <Form
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(() => onSubmit({ url, description, events: events as WebhookEventType[] })).catch(() => undefined);
      }}
    >
      <Field label="Endpoint URL" name="url" type="url" isRequired value={url} onChange={setUrl} error={action.error} pointer="/body/url" placeholder="https://example.com/sigil/webhooks" description="A public https:// address of your server." autoFocus />
      <Field label="Description" name="description" value={description} onChange={setDescription} error={action.error} pointer="/body/description" description="Optional: what receives these events." />
      <CheckboxField
        label="Events"
        description="Leave every box unchecked to receive every event."
        options={SUBSCRIBABLE_EVENTS.map((type) => ({ value: type, label: <Worded words={EVENT_WORDS[type] ?? type} code={type} /> }))}
        value={events}
        onChange={setEvents}
        error={action.error}
        pointer="/body/events"
      />
      <FormError error={action.error} fields={FIELDS} />
      <div className="dialog-actions">
        <Button className="button" onPress={close}>
          Cancel
        </Button>
        <BusyButton type="submit" className="button button-primary" busy={action.busy}>
          {submitLabel}
        </BusyButton>
      </div>
    </Form>
  );
}
