import { readFileSync } from 'node:fs';
import { GraphQLError, principalWith } from '@sigil/kit/graphql';
import type { BillingService } from './billing.ts';
import type { Resolvers } from './gen/graphql.ts';
import { PLAN_IDS, PLANS } from './plans/index.ts';
import { overageWords } from './plans/words.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

/** The organization as billing knows it: its id (accounts owns the rest). */
export interface OrganizationRef {
  id: string;
}

export function createResolvers(billing: BillingService): Resolvers {
  return {
    Organization: {
      __resolveReference: (ref) => ({ id: ref.id }),
      billing: async (organization, _args, context) => {
        const principal = principalWith(context, 'billing:manage');
        if (principal.organizationId !== organization.id) throw new GraphQLError('Billing of another organization is not visible.', { extensions: { code: 'FORBIDDEN' } });
        return billing.overview(organization.id);
      },
    },
    Billing: {
      plans: (view) => PLAN_IDS.map((id) => ({ id, name: PLANS[id].name, monthlyBase: PLANS[id].monthlyBase, includedEnvelopes: PLANS[id].includedEnvelopes, beyondIncluded: overageWords(id), current: id === view.plan })),
    },
  };
}
