/**
 * The draft the editor works on, in the shape of the contract's SaveTemplateDraft (api-decisions.md), and the pure
 * geometry of placing fields: positions and sizes are PDF points from the page's top-left corner.
 */

export const FIELD_TYPES = ['signature', 'initials', 'text', 'date', 'checkbox', 'attachment'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** What a person reads for each type, and the size a new field gets (the sizes document mode prints, docs/templates.md). */
export const FIELD_KINDS: Record<FieldType, { label: string; width: number; height: number }> = {
  signature: { label: 'Signature', width: 200, height: 40 },
  initials: { label: 'Initials', width: 80, height: 40 },
  text: { label: 'Text', width: 160, height: 20 },
  date: { label: 'Date', width: 100, height: 20 },
  checkbox: { label: 'Checkbox', width: 14, height: 14 },
  attachment: { label: 'Attachment', width: 160, height: 20 },
};

export interface DraftRole {
  name: string;
  order: number;
}
export interface DraftVariable {
  name: string;
  required: boolean;
}
export interface DraftField {
  id: string;
  role: string;
  type: FieldType;
  required: boolean;
  page?: number;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  variable?: string;
}
export interface Draft {
  /** The PDF the fields stand on (file mode), or null in document mode. */
  file: string | null;
  /** The document-mode body, or null in file mode. */
  body: { format: 'html'; content: string } | null;
  roles: DraftRole[];
  fields: DraftField[];
  variables: DraftVariable[];
}
export interface PageSize {
  width: number;
  height: number;
}
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A name the API takes for roles, variables and field ids (draft-input.ts's NAME). */
export const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Smallest box a resize leaves, in points. */
export const MIN_SIZE = 8;
/** The snapping grid, and how close (in points) an edge must come to another field's edge to stick to it. */
export const GRID = 6;
export const SNAP_DISTANCE = 5;

const round = (value: number) => Math.round(value * 100) / 100;

/** The next free id for a field of `type`: `signature_1`, `signature_2`, ... */
export function nextFieldId(type: FieldType, fields: readonly DraftField[]): string {
  for (let n = 1; ; n++) {
    const id = `${type}_${n}`;
    if (!fields.some((f) => f.id === id)) return id;
  }
}

/** Keeps a box inside its page (moving it, and shrinking it only when it is larger than the page). */
export function clampToPage(box: Box, page: PageSize): Box {
  const width = Math.min(Math.max(box.width, MIN_SIZE), page.width);
  const height = Math.min(Math.max(box.height, MIN_SIZE), page.height);
  return {
    x: round(Math.min(Math.max(box.x, 0), page.width - width)),
    y: round(Math.min(Math.max(box.y, 0), page.height - height)),
    width: round(width),
    height: round(height),
  };
}

/** A new field of `type`, centred at `point` (points) on `page`, kept inside it. */
export function boxAt(type: FieldType, point: { x: number; y: number }, page: PageSize): Box {
  const { width, height } = FIELD_KINDS[type];
  return clampToPage({ x: point.x - width / 2, y: point.y - height / 2, width, height }, page);
}

/**
 * Snaps one coordinate: to the nearest of `edges` (other fields' edges) within SNAP_DISTANCE, else to the grid.
 * `offsets` are the moving box's edges relative to the coordinate (0 and its size), so either edge may stick.
 */
function snapAxis(value: number, offsets: number[], edges: number[]): number {
  let best: { distance: number; value: number } | undefined;
  for (const offset of offsets) {
    for (const edge of edges) {
      const distance = Math.abs(value + offset - edge);
      if (distance <= SNAP_DISTANCE && (!best || distance < best.distance)) best = { distance, value: edge - offset };
    }
  }
  return best ? best.value : Math.round(value / GRID) * GRID;
}

/** A moved box snapped to the other fields' edges on its page, or to the grid. */
export function snapMove(box: Box, others: readonly Box[]): Box {
  const xs = others.flatMap((o) => [o.x, o.x + o.width]);
  const ys = others.flatMap((o) => [o.y, o.y + o.height]);
  return { ...box, x: snapAxis(box.x, [0, box.width], xs), y: snapAxis(box.y, [0, box.height], ys) };
}

/** A resized box (its right and bottom edges moved) snapped the same way. */
export function snapResize(box: Box, others: readonly Box[]): Box {
  const right = snapAxis(box.x + box.width, [0], others.flatMap((o) => [o.x, o.x + o.width]));
  const bottom = snapAxis(box.y + box.height, [0], others.flatMap((o) => [o.y, o.y + o.height]));
  return { ...box, width: Math.max(MIN_SIZE, right - box.x), height: Math.max(MIN_SIZE, bottom - box.y) };
}

/**
 * What a key does to a focused field: arrows move it by 1 point (10 with Shift); with Alt (Option) they resize it
 * from its right and bottom edges. Undefined for any other key.
 */
export function boxAfterKey(box: Box, key: string, modifiers: { shiftKey: boolean; altKey: boolean }): Box | undefined {
  const step = modifiers.shiftKey ? 10 : 1;
  const delta = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[key];
  if (!delta) return undefined;
  const [dx, dy] = delta as [number, number];
  if (modifiers.altKey) return { ...box, width: Math.max(MIN_SIZE, box.width + dx), height: Math.max(MIN_SIZE, box.height + dy) };
  return { ...box, x: box.x + dx, y: box.y + dy };
}

export function isPlaced(field: DraftField): field is DraftField & Box & { page: number } {
  return field.page !== undefined && field.x !== undefined && field.y !== undefined && field.width !== undefined && field.height !== undefined;
}

/** The accessible name of a placed field, the words the editor and its tests use: "Signature field for signer, page 1". */
export function fieldName(field: DraftField): string {
  const where = field.page ? `, page ${field.page}` : '';
  return `${FIELD_KINDS[field.type].label} field for ${field.role}${where}`;
}

/** Distinct colours for roles, each dark enough for its label to read on white (WCAG AA). */
const ROLE_COLOURS = ['#1d4ed8', '#b45309', '#047857', '#be185d', '#6d28d9', '#0e7490', '#4d7c0f', '#b91c1c'];

export function roleColour(roles: readonly DraftRole[], role: string): string {
  const index = roles.findIndex((r) => r.name === role);
  return ROLE_COLOURS[(index < 0 ? 0 : index) % ROLE_COLOURS.length] as string;
}

/** The body PUT /draft takes: exactly one of file or body (the contract's SaveTemplateDraft). */
export function saveBody(draft: Draft): Record<string, unknown> {
  return {
    ...(draft.file ? { file: draft.file } : { body: draft.body ?? { format: 'html', content: '' } }),
    roles: draft.roles,
    fields: draft.fields.map((field) => (draft.file ? field : withoutPosition(field))),
    variables: draft.variables,
  };
}

function withoutPosition({ page: _page, x: _x, y: _y, width: _w, height: _h, ...rest }: DraftField): DraftField {
  return rest;
}

/** `{{name}}` and `{{field:id}}` tokens of a document-mode body (draft-input.ts's FIELD_TAG and VARIABLE_TAG). */
export const TOKEN = /\{\{\s*(field:)?([A-Za-z][A-Za-z0-9_-]{0,63})\s*\}\}/g;

/** The index of the field an API pointer names (`/body/fields/3/x` → 3), if it names one. */
export function fieldIndexOf(pointer: string): number | undefined {
  const match = /^\/body\/fields\/(\d+)(\/|$)/.exec(pointer);
  return match ? Number(match[1]) : undefined;
}

/** A field's type as its id tells it (`signature_2`, `date-signed`), or text when its id names no type. */
function typeFromId(id: string): FieldType {
  return FIELD_TYPES.find((type) => id.toLowerCase().startsWith(type)) ?? 'text';
}

/**
 * `content` as the draft's body, with every `{{name}}` and `{{field:id}}` it holds declared (the API refuses a token
 * the draft does not declare): a required variable each, and a required field each, for the first role, of the type
 * its id names. What was declared is returned too, to be said in words.
 */
export function withBody(draft: Draft, content: string): { draft: Draft; declared: string[] } {
  const variables = [...draft.variables];
  const fields = [...draft.fields];
  const declared: string[] = [];
  const role = draft.roles[0]?.name;
  for (const [, isField, name] of content.matchAll(TOKEN)) {
    if (!name) continue;
    if (!isField && !variables.some((v) => v.name === name)) {
      variables.push({ name, required: true });
      declared.push(`variable ${name}`);
    } else if (isField && role && !fields.some((f) => f.id === name)) {
      fields.push({ id: name, role, type: typeFromId(name), required: true });
      declared.push(`${FIELD_KINDS[typeFromId(name)].label.toLowerCase()} field ${name}`);
    }
  }
  return { draft: { ...draft, body: { format: 'html', content }, variables, fields }, declared };
}

/** A placed field moved to page `page` of `size`, where it stood on its own page (kept inside the new one). */
export function movedToPage(field: DraftField & Box, page: number, size: PageSize): Box & { page: number } {
  return { page, ...clampToPage(field, size) };
}
