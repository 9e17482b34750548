import { graphql } from '../../../gql/index.ts';
import type { BillingPageQuery } from '../../../gql/graphql.ts';

/** Everything the billing page shows, in one read (the billing subgraph's `Organization.billing`). */
export const BillingQuery = graphql(`
  query BillingPage {
    organization {
      id
      billing {
        plan
        planName
        status
        currentPeriodStart
        currentPeriodEnd
        cancelAtPeriodEnd
        hasPaymentMethod
        paymentMethod {
          brand
          last4
          expMonth
          expYear
        }
        sendingBlocked
        usage {
          period
          periodStart
          periodEnd
          completedEnvelopes
          included
          overage
          addOns {
            smsOtp
            idCheck
            qesSignature
          }
          daily {
            date
            completedEnvelopes
          }
        }
        entitlements {
          includedEnvelopes
          overageAllowed
          features {
            ssoConnections
            scim
            enforcedSso
            branding
            signingLinks
            sms
            viewersPerEnvelope
            viewerDocumentAccess
            auditLogExport
            euDataResidency
            whiteLabel
            subAccounts
          }
        }
        upcomingInvoice {
          currency
          periodStart
          periodEnd
          lines {
            description
            quantity
            unitAmount
            amount
          }
          subtotal
          total
        }
        plans {
          id
          name
          monthlyBase
          includedEnvelopes
          beyondIncluded
          current
        }
      }
    }
  }
`);

export type Billing = NonNullable<BillingPageQuery['organization']>['billing'];
export type PlanOffer = Billing['plans'][number];
export type Usage = Billing['usage'];
export type Invoice = NonNullable<Billing['upcomingInvoice']>;
export type Card = NonNullable<Billing['paymentMethod']>;
export type Features = Billing['entitlements']['features'];
