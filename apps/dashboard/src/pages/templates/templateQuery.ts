import { graphql } from '../../gql/index.ts';
import type { TemplateQuery as TemplateData } from '../../gql/graphql.ts';
import type { Draft, DraftField, FieldType } from './editor/model.ts';

/** The template page's one read: the template with every version (published newest first, then the draft). */
export const TemplateQuery = graphql(`
  query Template($id: ID!) {
    template(id: $id) {
      id
      name
      description
      latestVersion
      hasDraft
      versions {
        version
        file
        pageCount
        pages {
          width
          height
        }
        body {
          format
          content
        }
        roles {
          name
          order
        }
        fields {
          id
          role
          type
          required
          page
          x
          y
          width
          height
          variable
        }
        variables {
          name
          required
        }
        createdAt
        publishedAt
      }
    }
  }
`);

export type Version = NonNullable<TemplateData['template']>['versions'][number];

/** A version as the editor's draft (GraphQL's nulls become absent members, as SaveTemplateDraft takes them). */
export function toDraft(version: Version): Draft {
  return {
    file: version.file ?? null,
    body: version.body ? { format: 'html', content: version.body.content } : null,
    roles: version.roles.map((r) => ({ name: r.name, order: r.order })),
    variables: version.variables.map((v) => ({ name: v.name, required: v.required })),
    fields: version.fields.map((f) => {
      const field: DraftField = { id: f.id, role: f.role, type: f.type as FieldType, required: f.required };
      for (const key of ['page', 'x', 'y', 'width', 'height'] as const) if (f[key] !== null && f[key] !== undefined) field[key] = f[key];
      if (f.variable) field.variable = f.variable;
      return field;
    }),
  };
}

/** The latest published version: the one `latestVersion` names (the versions' order is not relied on). */
export function latestPublished(template: { latestVersion?: number | null; versions: readonly Version[] }): Version | undefined {
  return template.latestVersion ? template.versions.find((v) => v.version === String(template.latestVersion)) : undefined;
}
