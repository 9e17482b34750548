/** Who signs in: what the sign-in form says, completed from the `users` option for an address it knows. */

export interface LocalIdpUser {
  email: string;
  /** First and last name; default: the address's local part. */
  name?: string;
  groups?: string[];
}

export interface Person {
  email: string;
  name: string;
  firstName: string;
  lastName: string;
  groups: string[];
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The person from the form's fields, or the reason they are not enough. */
export function personFromForm(fields: Record<string, unknown>, users: LocalIdpUser[]): Person | { error: string } {
  const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string).trim() : '');
  const email = text('email').toLowerCase();
  if (!EMAIL.test(email)) return { error: 'Enter an e-mail address, like ada@example.com.' };
  const known = users.find((user) => user.email.toLowerCase() === email);
  const groupsText = text('groups');
  const groups = groupsText ? groupsText.split(',').map((group) => group.trim()).filter(Boolean) : (known?.groups ?? []);
  return personOf({ email, name: text('name') || known?.name, groups });
}

export function personOf(user: LocalIdpUser): Person {
  const name = user.name?.trim() || user.email.split('@')[0]!;
  const [firstName = name, ...rest] = name.split(/\s+/);
  return { email: user.email, name, firstName, lastName: rest.join(' '), groups: user.groups ?? [] };
}
