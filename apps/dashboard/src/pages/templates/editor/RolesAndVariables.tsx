import { Button } from 'react-aria-components';
import { Field } from '@sigil/web-ui';
import { CheckField } from './controls.tsx';
import { roleColour, type Draft } from './model.ts';
import type { DraftEditor } from './useDraft.ts';

/** A name not yet used among `taken`: `role_2`, `role_3`, ... */
function freeName(base: string, taken: readonly string[]): string {
  for (let n = taken.length + 1; ; n++) if (!taken.includes(`${base}_${n}`)) return `${base}_${n}`;
}

/** The draft's roles (who signs, in which turn, in which colour) and variables (values given when sending). */
export function RolesAndVariables({ editor }: { editor: DraftEditor }) {
  const { draft, update, error } = editor;
  const renameRole = (from: string, to: string) =>
    update((d: Draft) => ({ ...d, roles: d.roles.map((r) => (r.name === from ? { ...r, name: to } : r)), fields: d.fields.map((f) => (f.role === from ? { ...f, role: to } : f)) }));
  const renameVariable = (from: string, to: string) =>
    update((d: Draft) => ({ ...d, variables: d.variables.map((v) => (v.name === from ? { ...v, name: to } : v)), fields: d.fields.map((f) => (f.variable === from ? { ...f, variable: to } : f)) }));
  return (
    <>
      <section className="tpl-panel" aria-labelledby="tpl-roles-heading">
        <h2 id="tpl-roles-heading">Roles</h2>
        <p className="muted">Each role is one recipient when sending. Roles with the same turn sign at the same time.</p>
        {draft.roles.map((role, i) => (
          <div key={i} className="tpl-row" role="group" aria-label={`Role ${role.name}`}>
            <span className="tpl-swatch" style={{ background: roleColour(draft.roles, role.name) }} aria-hidden="true" />
            <Field label="Role name" value={role.name} onChange={(name) => renameRole(role.name, name)} error={error} pointer={`/body/roles/${i}/name`} />
            <Field label="Signing turn" type="number" value={String(role.order)} onChange={(value) => update((d) => ({ ...d, roles: d.roles.map((r, j) => (j === i ? { ...r, order: Number(value) || 1 } : r)) }))} error={error} pointer={`/body/roles/${i}/order`} />
            <Button className="button button-quiet" isDisabled={draft.fields.some((f) => f.role === role.name)} onPress={() => update((d) => ({ ...d, roles: d.roles.filter((_, j) => j !== i) }))} aria-label={`Remove role ${role.name}`}>
              Remove
            </Button>
          </div>
        ))}
        <Button className="button" onPress={() => update((d) => ({ ...d, roles: [...d.roles, { name: freeName('role', d.roles.map((r) => r.name)), order: d.roles.length + 1 }] }))}>
          Add role
        </Button>
      </section>
      <section className="tpl-panel" aria-labelledby="tpl-variables-heading">
        <h2 id="tpl-variables-heading">Variables</h2>
        <p className="muted">Values the sender gives for each envelope, filled into text fields or the document's {'{{name}}'} tokens.</p>
        {draft.variables.map((variable, i) => (
          <div key={i} className="tpl-row" role="group" aria-label={`Variable ${variable.name}`}>
            <Field label="Variable name" value={variable.name} onChange={(name) => renameVariable(variable.name, name)} error={error} pointer={`/body/variables/${i}/name`} />
            <CheckField label="Required" checked={variable.required} onChange={(required) => update((d) => ({ ...d, variables: d.variables.map((v, j) => (j === i ? { ...v, required } : v)) }))} />
            <Button className="button button-quiet" onPress={() => update((d) => ({ ...d, variables: d.variables.filter((_, j) => j !== i), fields: d.fields.map((f) => (f.variable === variable.name ? { ...f, variable: undefined } : f)) }))} aria-label={`Remove variable ${variable.name}`}>
              Remove
            </Button>
          </div>
        ))}
        <Button className="button" onPress={() => update((d) => ({ ...d, variables: [...d.variables, { name: freeName('variable', d.variables.map((v) => v.name)), required: true }] }))}>
          Add variable
        </Button>
      </section>
    </>
  );
}
