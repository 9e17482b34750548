/**
 * NetworkPolicies against the call graph. The edges are read from the rendered configuration itself (every
 * `http://<service>.<namespace>.svc` address a workload is given, SERVICE_URLS included), so a caller added to a
 * ConfigMap without its policy, or a policy that lets in a service that never calls, fails here.
 */
import { describe, expect, it } from 'vitest';
import { BILLING_CALLERS } from '@sigil/proto/internal-billing';
import { BRANDING_CALLERS } from '@sigil/proto/internal-branding';
import { CATALOG_CALLERS } from '@sigil/proto/internal-catalog';
import { ENVELOPE_CALLERS } from '@sigil/proto/internal-envelopes';
import { TEMPLATE_CALLERS } from '@sigil/proto/internal-templates';
import { callersOf, WORKLOAD_SPECS, WORKLOADS, type Workload } from '../src/workloads.ts';
import { named, ofKind, overlayNames, rendered, resolveEnv, selects, type Plain, type Rendered } from './rendered-objects.ts';

/** caller → callee, from the service addresses in each workload's resolved environment. */
function edgesFromConfig(render: Rendered): Set<string> {
  const address = new RegExp(`https?://([a-z-]+)\\.${render.overlay.namespace}\\.svc:\\d+`, 'g');
  const edges = new Set<string>();
  for (const deployment of ofKind(render, 'Deployment')) {
    const env = resolveEnv(render, deployment);
    for (const value of Object.values(env)) for (const match of value.matchAll(address)) edges.add(`${deployment.metadata.name} -> ${match[1]}`);
  }
  return edges;
}

const workloadOf = (render: Rendered, peer: Plain): string | undefined => {
  const labels = peer.podSelector?.matchLabels;
  if (!labels || peer.namespaceSelector) return undefined;
  return ofKind(render, 'Deployment').find((d) => selects(labels, d.spec.template.metadata.labels))?.metadata.name;
};

/** Who may connect to a workload's http port, by its NetworkPolicy: a list of workloads, or 'anyone'. */
function admittedCallers(render: Rendered, workload: Workload): string[] | 'anyone' {
  const policy = named(render, 'NetworkPolicy', workload);
  if (!policy) throw new Error(`no NetworkPolicy for ${workload}`);
  const callers: string[] = [];
  for (const rule of policy.spec.ingress ?? []) {
    if (!rule.from) return 'anyone';
    for (const peer of rule.from) {
      const caller = workloadOf(render, peer);
      if (!caller) throw new Error(`${workload}: ingress from something that is not a workload: ${JSON.stringify(peer)}`);
      callers.push(caller);
    }
  }
  return callers.sort();
}

/** Workloads a policy's egress lets a workload reach on their http port. */
function reachable(render: Rendered, workload: Workload): string[] {
  const policy = named(render, 'NetworkPolicy', workload);
  return (policy?.spec.egress ?? []).flatMap((rule: Plain) => (rule.to ?? []).map((peer: Plain) => workloadOf(render, peer)).filter(Boolean));
}

describe.each(overlayNames)('%s overlay', (name) => {
  const render = rendered[name];
  const edges = edgesFromConfig(render);
  const declared = new Set(WORKLOADS.flatMap((caller) => WORKLOAD_SPECS[caller].calls.map((callee) => `${caller} -> ${callee}`)));

  it('the call graph in workloads.ts is exactly the one the configuration wires', () => {
    expect([...edges].sort()).toEqual([...declared].sort());
    expect(edges.has('envelopes -> templates')).toBe(true);
    expect(edges.has('gateway -> sandbox')).toBe(true);
  });

  it('a default-deny policy covers every pod of the namespace', () => {
    expect(named(render, 'NetworkPolicy', 'default-deny')?.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
  });

  it('no policy but its own (and default-deny) selects a workload\'s pods: policies add up', () => {
    for (const deployment of ofKind(render, 'Deployment')) {
      const labels = deployment.spec.template.metadata.labels;
      const selecting = ofKind(render, 'NetworkPolicy').filter((policy) => {
        const matchLabels = policy.spec.podSelector.matchLabels ?? {};
        return Object.keys(matchLabels).length === 0 || selects(matchLabels, labels);
      });
      expect(selecting.map((policy) => policy.metadata.name).sort()).toEqual(['default-deny', deployment.metadata.name].sort());
    }
  });

  for (const workload of WORKLOADS) {
    it(`${workload}: admitted callers are the gateway and the services that call it, no one else`, () => {
      const callers = [...edges].filter((edge) => edge.endsWith(` -> ${workload}`)).map((edge) => edge.split(' -> ')[0] as string).sort();
      const admitted = admittedCallers(render, workload);
      if (workload === 'gateway') expect(admitted).toBe('anyone');
      else expect(admitted).toEqual(callers);
      expect(callers).toEqual(callersOf(workload).sort());
      for (const callee of WORKLOAD_SPECS[workload].calls) expect(reachable(render, workload)).toContain(callee);
    });
  }

  it('the internal contracts allow each call the configuration makes', () => {
    const allowed: Partial<Record<Workload, readonly string[]>> = {
      templates: TEMPLATE_CALLERS,
      billing: BILLING_CALLERS,
      envelopes: ENVELOPE_CALLERS,
      'backup-catalog': CATALOG_CALLERS,
      accounts: BRANDING_CALLERS,
    };
    for (const edge of edges) {
      const [caller, callee] = edge.split(' -> ') as [string, Workload];
      // The gateway calls every routed service's public API; the controller calls the gateway's.
      if (caller === 'gateway' || callee === 'gateway') continue;
      expect(allowed[callee], edge).toContain(caller);
    }
  });

  it('every workload that uses NATS may reach it, and only platform pods may reach NATS', () => {
    for (const workload of WORKLOADS.filter((w) => WORKLOAD_SPECS[w].dependencies.includes('nats'))) {
      const egress = named(render, 'NetworkPolicy', workload)?.spec.egress as Plain[];
      expect(egress.some((rule) => rule.ports?.some((port: Plain) => port.port === 4222)), workload).toBe(true);
    }
    const nats = named(render, 'NetworkPolicy', 'nats');
    expect(nats?.spec.ingress[0].from).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'sigil' } } }]);
  });
});
