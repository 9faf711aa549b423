import type { NodeState } from './model';

export type Theme = 'light' | 'dark';

/**
 * StateLook is how a state reads without colour too: a glyph in the label
 * and a border style. Colour (per theme) is the third, redundant cue.
 */
export interface StateLook {
  label: string;
  glyph: string;
  border: 'solid' | 'dashed' | 'dotted' | 'double';
  borderWidth: number;
  description: string;
}

export const STATE_LOOK: Record<NodeState, StateLook> = {
  resolved: {
    label: 'Resolved',
    glyph: '✓',
    border: 'solid',
    borderWidth: 2,
    description: 'every referent exists and is ready',
  },
  waiting: {
    label: 'Waiting',
    glyph: '…',
    border: 'dashed',
    borderWidth: 2,
    description: 'a referent exists but is not ready yet',
  },
  stuck: {
    label: 'Stuck',
    glyph: '!',
    border: 'double',
    borderWidth: 5,
    description: 'unresolved longer than the threshold',
  },
  notfound: {
    label: 'Not found',
    glyph: '?',
    border: 'dotted',
    borderWidth: 3,
    description: 'a referent does not exist',
  },
  error: {
    label: 'Error',
    glyph: '✕',
    border: 'solid',
    borderWidth: 4,
    description: 'unknown kind, forbidden or watch error',
  },
  starting: { label: 'Starting', glyph: '▷', border: 'dashed', borderWidth: 2, description: 'watch opening' },
  priming: {
    label: 'Priming',
    glyph: '◔',
    border: 'dashed',
    borderWidth: 2,
    description: 'filling its cache; nothing is judged missing yet',
  },
  active: { label: 'Active', glyph: '●', border: 'solid', borderWidth: 2, description: 'watching and dispatching' },
  grace: {
    label: 'Grace',
    glyph: '◑',
    border: 'dotted',
    borderWidth: 3,
    description: 'no references left; cancelled unless re-referenced',
  },
  cancelled: {
    label: 'Cancelled',
    glyph: '⊘',
    border: 'dotted',
    borderWidth: 2,
    description: 'watch closed after the grace period',
  },
};

export interface Swatch {
  stroke: string;
  fill: string;
}

export interface Palette {
  background: string;
  text: string;
  muted: string;
  edge: string;
  edgeLabel: string;
  accent: string;
  groupFill: string;
  groupBorder: string;
  states: Record<NodeState, Swatch>;
}

/** These values are mirrored as --state-* variables in app/globals.css; a unit test keeps both in step. */
export const PALETTES: Record<Theme, Palette> = {
  light: {
    background: '#ffffff',
    text: '#1f2328',
    muted: '#59636e',
    edge: '#8c959f',
    edgeLabel: '#59636e',
    accent: '#0969da',
    groupFill: '#f6f8fa',
    groupBorder: '#d1d9e0',
    states: {
      resolved: { stroke: '#1a7f37', fill: '#dafbe1' },
      waiting: { stroke: '#9a6700', fill: '#fff8c5' },
      stuck: { stroke: '#bc4c00', fill: '#fff1e5' },
      notfound: { stroke: '#8250df', fill: '#fbefff' },
      error: { stroke: '#cf222e', fill: '#ffebe9' },
      starting: { stroke: '#0969da', fill: '#ddf4ff' },
      priming: { stroke: '#0969da', fill: '#ddf4ff' },
      active: { stroke: '#0550ae', fill: '#ddf4ff' },
      grace: { stroke: '#9a6700', fill: '#fff8c5' },
      cancelled: { stroke: '#6e7781', fill: '#f6f8fa' },
    },
  },
  dark: {
    background: '#0d1117',
    text: '#e6edf3',
    muted: '#9198a1',
    edge: '#6e7681',
    edgeLabel: '#9198a1',
    accent: '#4493f8',
    groupFill: '#151b23',
    groupBorder: '#3d444d',
    states: {
      resolved: { stroke: '#3fb950', fill: '#12261e' },
      waiting: { stroke: '#d29922', fill: '#272115' },
      stuck: { stroke: '#f0883e', fill: '#2d1d10' },
      notfound: { stroke: '#bc8cff', fill: '#231a33' },
      error: { stroke: '#ff7b72', fill: '#2d1214' },
      starting: { stroke: '#58a6ff', fill: '#0c2136' },
      priming: { stroke: '#58a6ff', fill: '#0c2136' },
      active: { stroke: '#79c0ff', fill: '#0c2136' },
      grace: { stroke: '#d29922', fill: '#272115' },
      cancelled: { stroke: '#8b949e', fill: '#161b22' },
    },
  },
};

/** nodeLabel is what the canvas prints: state glyph, name, and a second line with kind (and namespace). */
export function nodeLabel(n: {
  type: string;
  label: string;
  kind: string;
  namespace: string;
  state: NodeState;
  size?: number;
  counts?: Partial<Record<NodeState, number>>;
}): string {
  const glyph = STATE_LOOK[n.state].glyph;
  if (n.type === 'group') {
    const attention = (n.counts?.stuck ?? 0) + (n.counts?.error ?? 0) + (n.counts?.notfound ?? 0);
    const size = (n.size ?? 0).toLocaleString('en-US');
    return attention > 0 ? `${n.label}\n${size} objects\n${attention} need attention` : `${n.label}\n${size} objects`;
  }
  if (n.type === 'controller') return `${glyph} ${n.label}\n${STATE_LOOK[n.state].label.toLowerCase()} controller`;
  const kind = n.kind.split('.')[0] ?? n.kind;
  return `${glyph} ${n.label}\n${kind}${n.namespace ? ` · ${n.namespace}` : ''}`;
}

type StyleBlock = { selector: string; style: Record<string, string | number | number[]> };

/**
 * graphStylesheet builds the cytoscape stylesheet for one theme; cytoscape cannot read CSS variables.
 * `dense` (thousands of nodes on screen) draws edges as straight lines without arrows, which costs a fraction to draw.
 * Each property a rule sets costs cytoscape work per element when styles are first applied (its style and bounds
 * triggers), so rules set each property once and leave out what is not drawn.
 * `layered` draws straight edges, all pointing right, and names an edge's field path only when its node is selected:
 * between two columns the labels of many edges would lie on top of each other.
 */
export function graphStylesheet(theme: Theme, opts: { dense?: boolean; layered?: boolean } = {}): StyleBlock[] {
  const p = PALETTES[theme];
  const blocks: StyleBlock[] = [
    {
      selector: 'node',
      style: {
        label: 'data(display)',
        'font-family': 'ui-sans-serif, system-ui, -apple-system, "Segoe UI", sans-serif',
        'font-size': 12,
        'text-wrap': 'wrap',
        'text-max-width': '160px',
        'text-valign': 'bottom',
        // Centred text and a 30 × 30 shape are cytoscape's defaults: not set, so not applied per node.
        'text-margin-y': 6,
        color: p.text,
        'text-outline-color': p.background,
        'text-outline-width': 2,
        shape: 'round-rectangle',
        // Fill and border come from the state rules below (and the group rule): setting them here too would
        // apply each twice per node, and cytoscape pays per property applied, thousands of times on a big scope.
        'min-zoomed-font-size': 5,
        // A state change fades; on a dense graph nothing animates (see ANIMATE_BELOW), so no transition is set.
        ...(opts.dense
          ? {}
          : { 'transition-property': 'background-color, border-color, opacity', 'transition-duration': 250 }),
      },
    },
    { selector: 'node[type = "object"][?referent][!referrer]', style: { shape: 'ellipse' } },
    {
      selector: 'node[type = "object"][?referent][?referrer]',
      style: { shape: 'round-diamond', width: 34, height: 34 },
    },
    {
      selector: 'node[type = "controller"]',
      style: { shape: 'round-hexagon', width: 40, height: 36, 'font-weight': 600 },
    },
    {
      selector: 'node[type = "group"]',
      style: {
        shape: 'round-rectangle',
        'background-color': p.groupFill,
        'background-opacity': 0.6,
        'border-color': p.groupBorder,
        'border-width': 1,
        'border-style': 'solid',
        'text-valign': 'top',
        'text-halign': 'center',
        'text-margin-y': -4,
        'font-weight': 600,
        color: p.muted,
        padding: '18px',
      },
    },
    {
      selector: 'node[type = "group"][?collapsed]',
      style: {
        width: 150,
        height: 64,
        'text-valign': 'center',
        'text-margin-y': 0,
        'text-max-width': '140px',
        color: p.text,
        'border-width': 3,
        'background-opacity': 1,
        'font-weight': 600,
      },
    },
  ];
  for (const [state, look] of Object.entries(STATE_LOOK) as [NodeState, StateLook][]) {
    const swatch = p.states[state];
    blocks.push({
      selector: `node[type != "group"][state = "${state}"]`,
      style: {
        'background-color': swatch.fill,
        'border-color': swatch.stroke,
        'border-style': look.border,
        'border-width': look.borderWidth,
      },
    });
    blocks.push({
      selector: `node[type = "group"][?collapsed][state = "${state}"]`,
      style: { 'border-color': swatch.stroke, 'border-style': look.border, 'background-color': swatch.fill },
    });
  }
  blocks.push(
    { selector: 'node[state = "cancelled"]', style: { opacity: 0.55 } },
    { selector: 'node[?context]', style: { opacity: 0.35 } },
    {
      selector: 'edge',
      style: {
        width: 1.5,
        'curve-style': opts.dense ? 'haystack' : opts.layered ? 'straight' : 'bezier',
        'line-color': p.edge,
        // Haystack edges (dense) draw no arrows.
        ...(opts.dense ? {} : { 'target-arrow-color': p.edge, 'target-arrow-shape': 'triangle', 'arrow-scale': 0.9 }),
      },
    },
    {
      // Layered, an edge's field path is named only when its node is selected (edge.neighbour, below).
      selector: opts.layered ? 'edge.neighbour' : 'edge',
      style: {
        label: 'data(label)',
        'font-size': 10,
        color: p.edgeLabel,
        'text-rotation': 'autorotate',
        'text-outline-color': p.background,
        'text-outline-width': 2,
        'min-zoomed-font-size': 8,
      },
    },
    {
      selector: 'edge[type = "watch"]',
      style: {
        'line-style': 'dashed',
        'line-dash-pattern': [4, 4],
        width: 1,
        ...(opts.dense ? {} : { 'target-arrow-shape': 'none' }),
        // Thousands of referents watched by a handful of controllers: their long lines stay faint behind the references.
        opacity: opts.dense ? 0.15 : 0.7,
      },
    },
    // A selector's match: dotted, so it reads apart from a reference that names its referent.
    { selector: 'edge[selector]', style: { 'line-style': 'dotted', 'line-dash-pattern': [2, 3] } },
    { selector: 'edge[?context]', style: { opacity: 0.3 } },
    {
      selector: 'node.selected',
      style: {
        'underlay-color': p.accent,
        'underlay-opacity': 0.25,
        'underlay-padding': 8,
        'underlay-shape': 'ellipse',
        'border-color': p.accent,
        'font-weight': 700,
      },
    },
    {
      selector: 'edge.neighbour',
      style: { 'line-color': p.accent, 'target-arrow-color': p.accent, width: 2.5, color: p.text, 'z-index': 10 },
    },
    { selector: 'node.faded', style: { opacity: 0.25 } },
    { selector: 'edge.faded', style: { opacity: 0.12 } },
  );
  if (opts.dense) {
    blocks.push({ selector: 'edge[type = "watch"].neighbour', style: { opacity: 1 } });
  }
  return blocks;
}
