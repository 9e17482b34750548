import { Button, FieldError, Label, ListBox, ListBoxItem, Popover, Select, SelectValue, Text } from 'react-aria-components';
import { detailFor } from '../developers/fields.tsx';
import { isRole, ROLE_WORDS, ROLES, type Role } from './roles.ts';

/**
 * A role picker that shows the API's refusal for `pointer` (`/body/role`) under it. `label` is visible unless
 * `hideLabel` (in a table row, where the column says it and the label names the member). `roles` are those offered
 * (every role by default).
 */
export function RoleSelect({ label, value, onChange, error, pointer = '/body/role', hideLabel, isDisabled, description, roles = ROLES }: { label: string; value: Role; onChange: (role: Role) => void; error?: unknown; pointer?: string; hideLabel?: boolean; isDisabled?: boolean; description?: string; roles?: readonly Role[] }) {
  const detail = detailFor(error, pointer);
  return (
    <Select
      className="field role-select"
      selectedKey={value}
      onSelectionChange={(key) => {
        if (isRole(key)) onChange(key);
      }}
      isInvalid={detail !== undefined}
      isDisabled={isDisabled}
      validationBehavior="aria"
    >
      <Label className={hideLabel ? 'visually-hidden' : undefined}>{label}</Label>
      <Button className="select-button">
        <SelectValue>{({ selectedText }) => selectedText}</SelectValue>
        <span aria-hidden="true">▾</span>
      </Button>
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{detail}</FieldError>
      <Popover className="select-popover">
        <ListBox className="select-list">
          {roles.map((role) => (
            <ListBoxItem key={role} id={role} className="select-option" textValue={ROLE_WORDS[role].name}>
              <span className="option-name">{ROLE_WORDS[role].name}</span>
              <span className="option-detail">{ROLE_WORDS[role].can}</span>
            </ListBoxItem>
          ))}
        </ListBox>
      </Popover>
    </Select>
  );
}
