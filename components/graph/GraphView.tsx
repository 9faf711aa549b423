'use client';

import type { Core, ElementDefinition, EventObject, LayoutOptions, StylesheetJson } from 'cytoscape';
import { memo, useEffect, useRef, useState } from 'react';
import {
  measureAppliedBatch,
  measureComplete,
  measureFirstRender,
  measureFirstRenderHeld,
} from '../data/performanceMarks';
import { DEFER_EDGES_ABOVE, EDGE_CHUNK, runInChunks, splitByView, viewRect, type ChunkRunner } from './deferredEdges';
import { diffModels } from './diff';
import { edgeData, nodeData } from './elements';
import type { GroupedModel } from './grouping';
import { ELK_MAX_NODES, layoutNodeOf, mergePositions, readableViewport, sweepLayout } from './layered';
import {
  ANIMATE_BELOW,
  LAYER_ABOVE,
  LAYOUT_DEBOUNCE_MS,
  debounce,
  decideLayout,
  fcoseOptions,
  fitPositions,
  layeredPositions,
  packBoxes,
  seedPositions,
  summaryLayoutOptions,
  type Box,
  type Debouncer,
  type LayoutName,
  type Point,
} from './layout';
import { startLayoutWorker, type LayoutWorker } from './layoutWorker';
import type { GraphEdge, GraphModel } from './model';
import { graphStylesheet, type Theme } from './style';
import styles from './GraphView.module.css';

export interface GraphViewProps {
  model: GroupedModel;
  theme: Theme;
  /** Node id to show selected (`obj:KEY` or `ctl:KIND`), or ''. */
  selectedId: string;
  onSelect(nodeId: string | null): void;
  onToggleGroup(groupId: string): void;
  /** `layered` (the default): referrers left, referents right, laid out by ELK in a worker; `force`: fcose. */
  layout?: LayoutName;
}

let fcoseRegistered = false;
const MAX_FIT_ZOOM = 1.4;

/**
 * GraphView renders the model with cytoscape, used directly. It diffs each
 * new model against the one on screen: state-only changes update element
 * data in one batch and keep positions; structural changes run a debounced
 * layout: the layered one in a Web Worker, where nodes on screen keep their
 * places and new ones join their columns, or fcose from the current positions.
 */
export const GraphView = memo(function GraphView({
  model,
  theme,
  selectedId,
  onSelect,
  onToggleGroup,
  layout = 'layered',
}: GraphViewProps) {
  const containerRef = useRef<HTMLDivElement>(null);
  const cyRef = useRef<Core | null>(null);
  const shownRef = useRef<GraphModel>({ nodes: [], edges: [] });
  const layoutRef = useRef<Debouncer | null>(null);
  const runningLayout = useRef<{ stop(): unknown } | null>(null);
  const handlers = useRef({ onSelect, onToggleGroup });
  const themeRef = useRef(theme);
  themeRef.current = theme;
  const denseRef = useRef(false);
  const layoutNameRef = useRef<LayoutName>(layout);
  const workerRef = useRef<LayoutWorker | null>(null);
  // Layered runs are asynchronous and answered in order; an answer older than one already drawn is dropped.
  const layeredRun = useRef(0);
  const layeredDrawn = useRef(0);
  // Nodes added since the last layered run: they take the place the next run gives them.
  const unplacedRef = useRef(new Set<string>());
  // The inputs of the stylesheet on screen (styleKeyText), so an unchanged one is not applied again.
  const styledRef = useRef('');
  // Edges of a dense first draw held back until its first frame is on screen (see deferredEdges.ts).
  const heldEdges = useRef<{ edges: GraphEdge[]; next: number; runner?: ChunkRunner } | null>(null);
  const [ready, setReady] = useState(false);
  handlers.current = { onSelect, onToggleGroup };

  useEffect(() => {
    let cancelled = false;
    let observer: ResizeObserver | undefined;
    void (async () => {
      const [{ default: cytoscape }, { default: fcose }] = await Promise.all([
        import('cytoscape'),
        import('cytoscape-fcose'),
      ]);
      if (cancelled || !containerRef.current) return;
      if (!fcoseRegistered) {
        cytoscape.use(fcose);
        fcoseRegistered = true;
      }
      const styleKey = currentStyleKey();
      styledRef.current = styleKeyText(styleKey);
      const cy = cytoscape({
        container: containerRef.current,
        elements: [],
        // Styled from the start: layouts measure nodes with the stylesheet's sizes.
        style: styleFor(styleKey) as unknown as StylesheetJson,
        minZoom: 0.08,
        maxZoom: 3,
        boxSelectionEnabled: false,
        selectionType: 'single',
        autoungrabify: false,
      });
      cy.on('tap', 'node', (ev: EventObject) => {
        const node = ev.target;
        if (node.data('type') === 'group') {
          if (node.data('collapsed') || node.isParent()) handlers.current.onToggleGroup(node.id());
          return;
        }
        handlers.current.onSelect(node.id());
      });
      cy.on('tap', (ev: EventObject) => {
        if (ev.target === cy) handlers.current.onSelect(null);
      });
      // Selection is driven by the URL (a 'selected' class), not cytoscape's own tap selection.
      cy.autounselectify(true);
      layoutRef.current = debounce(() => runLayout('incremental'), LAYOUT_DEBOUNCE_MS);
      observer = new ResizeObserver(() => cy.resize());
      observer.observe(containerRef.current);
      cyRef.current = cy;
      setReady(true);
    })();
    return () => {
      cancelled = true;
      observer?.disconnect();
      layoutRef.current?.cancel();
      runningLayout.current?.stop();
      heldEdges.current?.runner?.stop();
      heldEdges.current = null;
      workerRef.current?.stop();
      workerRef.current = null;
      cyRef.current?.destroy();
      cyRef.current = null;
      shownRef.current = { nodes: [], edges: [] };
    };
  }, []);

  /** addHeldEdges adds up to `max` held-back edges; true when none are left. */
  function addHeldEdges(cy: Core, max: number): boolean {
    const held = heldEdges.current;
    if (!held) return true;
    const end = Math.min(held.edges.length, held.next + max);
    // Every model change adds the held edges first (finishHeldEdges), so they belong to the model on screen.
    const contextIds = new Set(shownRef.current.nodes.filter((n) => n.context).map((n) => n.id));
    const added: ElementDefinition[] = [];
    for (let i = held.next; i < end; i++) {
      const e = held.edges[i]!;
      added.push({ group: 'edges', data: edgeData(e, contextIds.has(e.source) || contextIds.has(e.target)) });
    }
    held.next = end;
    cy.batch(() => {
      cy.add(added);
      // A node selected before its edges arrived highlights them as the selection effect would have.
      cy.nodes('.selected').connectedEdges().addClass('neighbour');
    });
    if (end < held.edges.length) return false;
    heldEdges.current = null;
    return true;
  }

  /** finishHeldEdges adds every held-back edge now: whatever changes the graph next starts from all of it. */
  function finishHeldEdges() {
    const held = heldEdges.current;
    const cy = cyRef.current;
    if (!held) return;
    held.runner?.stop();
    if (cy) {
      addHeldEdges(cy, Infinity);
      cy.one('render', measureComplete);
    }
    heldEdges.current = null;
  }

  function runLayout(mode: 'incremental' | 'full') {
    const cy = cyRef.current;
    if (!cy || cy.nodes().length === 0) return;
    finishHeldEdges();
    runningLayout.current?.stop();
    if (layoutNameRef.current === 'layered') {
      runLayered(cy, mode);
      return;
    }
    const summaries = cy.nodes('[?collapsed]').length > 0;
    const summariesOnly = summaries && cy.nodes('[type = "object"]').length === 0;
    const dense = denseRef.current;
    let options: unknown;
    let positions: Map<string, Point> | undefined;
    if (dense) {
      const at = layeredPositions(shownRef.current.nodes);
      positions = at;
      options = {
        name: 'preset',
        positions: (n: { id(): string }) => at.get(n.id()) ?? { x: 0, y: 0 },
        fit: false,
        animate: false,
      };
    } else
      options = summariesOnly
        ? summaryLayoutOptions(cy.nodes().length)
        : fcoseOptions(mode, cy.nodes().length, { summaries });
    const layout = cy.layout(options as LayoutOptions);
    runningLayout.current = layout;
    if (mode === 'full' || summariesOnly) {
      // A small graph fitted to a big canvas would be drawn huge; keep it at a readable scale.
      layout.one('layoutstop', () => {
        if (positions) {
          cy.viewport(fitPositions(positions.values(), cy.width(), cy.height(), 60, 40, MAX_FIT_ZOOM));
        } else {
          packComponents(cy);
          cy.fit(undefined, 40);
          if (cy.zoom() > MAX_FIT_ZOOM) {
            cy.zoom(MAX_FIT_ZOOM);
            cy.center();
          }
        }
        cy.one('render', measureFirstRender);
      });
    }
    layout.run();
  }

  /**
   * runLayered places the graph in layers. A full run draws at once with
   * sweepLayout (linear, a few hundred milliseconds for 5,000 nodes, and the
   * final answer for graphs too big for ELK); for a graph ELK lays out, the
   * worker's ELK answer then settles it. An incremental run goes to the
   * worker with the positions on screen, which those nodes keep.
   */
  function runLayered(cy: Core, mode: 'incremental' | 'full') {
    const run = ++layeredRun.current;
    const unplaced = new Set(unplacedRef.current);
    const previous: [string, Point][] = [];
    if (mode === 'incremental') {
      cy.nodes().forEach((n) => {
        if (!n.isParent() && !unplaced.has(n.id())) previous.push([n.id(), { ...n.position() }]);
      });
    }
    const nodes = shownRef.current.nodes.map(layoutNodeOf);
    const edges = shownRef.current.edges.map((e) => ({ source: e.source, target: e.target }));
    if (mode === 'full') {
      drawLayered(cy, run, sweepLayout(nodes, edges), 'first', unplaced);
      // Too big for ELK; or only summaries and controllers, two columns with nothing for ELK to order.
      if (nodes.length > ELK_MAX_NODES || nodes.every((n) => n.type !== 'object')) return;
    }
    const worker = (workerRef.current ??= startLayoutWorker());
    worker
      .layout({ nodes, edges, ...(previous.length > 0 ? { previous } : {}) })
      .catch((e: unknown) => {
        console.warn(`${e instanceof Error ? e.message : String(e)}; laying out on the page instead`);
        const fresh = sweepLayout(nodes, edges);
        return previous.length > 0 ? mergePositions(nodes, edges, new Map(previous), fresh) : fresh;
      })
      .then((answer) => {
        // A graph that keeps changing still gets drawn: each answer not older than the one on screen is applied.
        if (!answer || run < layeredDrawn.current || cyRef.current !== cy || layoutNameRef.current !== 'layered')
          return;
        if (mode === 'incremental') drawLayered(cy, run, answer, 'update', unplaced);
        else if (run === layeredDrawn.current) drawLayered(cy, run, answer, 'settle', unplaced);
        else {
          // A full answer overtaken by another full one already drawn: keep what is on screen, like an update.
          const placed = new Map<string, Point>();
          cy.nodes().forEach((n) => {
            if (!n.isParent() && !unplacedRef.current.has(n.id())) placed.set(n.id(), { ...n.position() });
          });
          drawLayered(cy, run, mergePositions(nodes, edges, placed, answer), 'update', unplaced);
        }
      });
  }

  /** drawLayered moves the nodes to `positions`: `first` sets the opening view, `settle` replaces the quick columns with ELK's answer, `update` keeps the view. */
  function drawLayered(
    cy: Core,
    run: number,
    positions: ReadonlyMap<string, Point>,
    how: 'first' | 'settle' | 'update',
    unplaced: ReadonlySet<string>,
  ) {
    layeredDrawn.current = run;
    for (const id of unplaced) unplacedRef.current.delete(id);
    runningLayout.current?.stop();
    const preset = cy.layout({
      name: 'preset',
      positions: (n: { id(): string; position(): Point }) => positions.get(n.id()) ?? n.position(),
      fit: false,
      animate: how !== 'first' && cy.nodes().length < ANIMATE_BELOW,
      animationDuration: 300,
    } as unknown as LayoutOptions);
    runningLayout.current = preset;
    preset.one('layoutstop', () => {
      if (how !== 'update') cy.viewport(readableViewport(positions.values(), cy.width(), cy.height()));
      if (how === 'first') cy.one('render', measureFirstRender);
    });
    preset.run();
  }

  // Apply each new model as a diff against what is on screen.
  useEffect(() => {
    const cy = cyRef.current;
    if (!ready || !cy) return;
    finishHeldEdges();
    const prev = shownRef.current;
    const diff = diffModels(prev, model);
    const decision = decideLayout(diff, prev.nodes.length);
    if (decision === 'none') {
      measureAppliedBatch();
      return;
    }
    const contextIds = new Set(model.nodes.filter((n) => n.context).map((n) => n.id));
    const dense = isDense(model);
    if (dense !== denseRef.current) {
      denseRef.current = dense;
      restyle(cy);
    }
    // A dense graph drawn from scratch is placed in layers as it is added: no layout pass over thousands of nodes.
    const layered =
      dense && decision === 'full' && layoutNameRef.current === 'force' ? layeredPositions(model.nodes) : undefined;
    // A dense graph drawn from scratch in layers: the sweep's columns are computed before the add, so the nodes are
    // added where they go (no layout pass), and only the edges crossing the opening view are in the first frame.
    const columns =
      dense && decision === 'full' && layoutNameRef.current === 'layered'
        ? sweepLayout(
            model.nodes.map(layoutNodeOf),
            model.edges.map((e) => ({ source: e.source, target: e.target })),
          )
        : undefined;
    const opening = columns ? readableViewport(columns.values(), cy.width(), cy.height()) : undefined;
    let edgesNow = diff.addedEdges;
    if (columns && opening && diff.addedEdges.length > DEFER_EDGES_ABOVE) {
      const split = splitByView(diff.addedEdges, columns, viewRect(opening, cy.width(), cy.height()));
      edgesNow = split.inView;
      heldEdges.current = { edges: split.later, next: 0 };
    }
    cy.batch(() => {
      for (const id of diff.removedEdges) cy.getElementById(id).remove();
      for (const id of diff.removedNodes) cy.getElementById(id).remove();
      const placed = new Map<string, Point>();
      if (columns) {
        cy.nodes().forEach((n) => {
          const at = columns.get(n.id());
          if (at) n.position(at);
        });
      } else if (!layered) {
        cy.nodes().forEach((n) => {
          placed.set(n.id(), n.position());
        });
      }
      const seeds =
        layered ??
        columns ??
        seedPositions(
          diff.addedNodes.map((n) => n.id),
          model.edges,
          placed,
        );
      const added: ElementDefinition[] = [];
      // Parents first: cytoscape needs a compound parent before its children.
      const addedNodes = [...diff.addedNodes].sort((a, b) => Number(b.type === 'group') - Number(a.type === 'group'));
      for (const n of addedNodes) {
        const seed = seeds.get(n.id);
        added.push({ group: 'nodes', data: nodeData(n), ...(seed ? { position: seed } : {}) });
      }
      for (const e of edgesNow)
        added.push({ group: 'edges', data: edgeData(e, contextIds.has(e.source) || contextIds.has(e.target)) });
      if (added.length > 0) cy.add(added);
      if (!columns) for (const n of diff.addedNodes) unplacedRef.current.add(n.id);
      for (const id of diff.removedNodes) unplacedRef.current.delete(id);
      for (const n of diff.changedNodes) cy.getElementById(n.id).data(nodeData(n));
      for (const e of diff.changedEdges)
        cy.getElementById(e.id).data(edgeData(e, contextIds.has(e.source) || contextIds.has(e.target)));
      // Context flags live on edges too; refresh them when a node's context changed.
      const contextBefore = new Set(prev.nodes.filter((n) => n.context).map((n) => n.id));
      if (diff.changedNodes.some((n) => (n.context === true) !== contextBefore.has(n.id))) {
        for (const e of model.edges)
          cy.getElementById(e.id).data('context', contextIds.has(e.source) || contextIds.has(e.target));
      }
    });
    shownRef.current = model;
    if (columns && opening) {
      layoutRef.current?.cancel();
      runningLayout.current?.stop();
      // Answers of layered runs started before this draw are older than it: dropped.
      layeredDrawn.current = ++layeredRun.current;
      unplacedRef.current.clear();
      cy.viewport(opening);
      const held = heldEdges.current;
      cy.one('render', () => {
        if (held) measureFirstRenderHeld();
        else measureFirstRender();
        // Held edges not yet added by a later change (which adds them all first) follow, a chunk per task.
        if (held && heldEdges.current === held && !held.runner && cyRef.current === cy)
          held.runner = runInChunks(
            () => addHeldEdges(cy, EDGE_CHUNK),
            () => cy.one('render', measureComplete),
          );
      });
    } else if (layered) {
      layoutRef.current?.cancel();
      runningLayout.current?.stop();
      cy.viewport(fitPositions(layered.values(), cy.width(), cy.height(), 60, 40, MAX_FIT_ZOOM));
      cy.one('render', measureFirstRender);
    } else if (decision === 'full') {
      layoutRef.current?.cancel();
      runLayout('full');
    } else if (decision === 'incremental') {
      layoutRef.current?.schedule();
    }
    measureAppliedBatch();
  }, [model, ready]);

  function currentStyleKey(): StyleKey {
    return { theme: themeRef.current, dense: denseRef.current, layered: layoutNameRef.current === 'layered' };
  }

  /**
   * restyle replaces the stylesheet when its inputs changed. Replacing it restyles every element, seconds on a
   * scope of thousands of nodes, so the same sheet is never applied twice (the theme effect runs on mount too).
   */
  function restyle(cy: Core) {
    const key = currentStyleKey();
    if (styleKeyText(key) === styledRef.current) return;
    styledRef.current = styleKeyText(key);
    cy.style(styleFor(key) as unknown as Parameters<Core['style']>[0]);
  }

  useEffect(() => {
    if (cyRef.current) restyle(cyRef.current);
  }, [theme, ready]);

  // Switching between layered and force lays the graph out afresh in the other style.
  useEffect(() => {
    const cy = cyRef.current;
    if (!ready || !cy || layoutNameRef.current === layout) return;
    layoutNameRef.current = layout;
    restyle(cy);
    layoutRef.current?.cancel();
    runLayout('full');
  }, [layout, ready]);

  // Selection comes from the URL: highlight the node and its edges, and bring it into view.
  useEffect(() => {
    const cy = cyRef.current;
    if (!ready || !cy) return;
    cy.batch(() => {
      cy.elements().removeClass('neighbour selected');
      if (selectedId) {
        const node = cy.getElementById(selectedId);
        if (node.nonempty()) {
          node.addClass('selected');
          node.connectedEdges().addClass('neighbour');
        }
      }
    });
    if (!selectedId) return;
    const node = cy.getElementById(selectedId);
    if (node.empty()) return;
    const ext = cy.extent();
    const p = node.position();
    if (p.x < ext.x1 || p.x > ext.x2 || p.y < ext.y1 || p.y > ext.y2) {
      cy.animate({ center: { eles: node } }, { duration: 250 });
    }
  }, [selectedId, ready, model]);

  const zoomBy = (factor: number) => {
    const cy = cyRef.current;
    if (!cy) return;
    cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  };

  return (
    <div className={styles.wrap}>
      <div
        ref={containerRef}
        className={styles.canvas}
        role="img"
        aria-label={`Reference graph with ${model.nodes.length} nodes and ${model.edges.length} edges. The objects table lists the same nodes for keyboard and screen reader use.`}
        data-testid="graph-canvas"
        data-layout={layout}
      />
      <div className={styles.controls} role="group" aria-label="Graph view">
        <button type="button" onClick={() => zoomBy(1.25)} aria-label="Zoom in" title="Zoom in">
          +
        </button>
        <button type="button" onClick={() => zoomBy(0.8)} aria-label="Zoom out" title="Zoom out">
          −
        </button>
        <button
          type="button"
          onClick={() =>
            cyRef.current?.animate({ fit: { eles: cyRef.current.elements(), padding: 40 } }, { duration: 250 })
          }
          aria-label="Fit graph to view"
          title="Fit to view"
        >
          ⤢
        </button>
        <button type="button" onClick={() => runLayout('full')} aria-label="Lay out again" title="Lay out again">
          ↻
        </button>
      </div>
    </div>
  );
});

interface StyleKey {
  theme: Theme;
  dense: boolean;
  layered: boolean;
}
const styleKeyText = (k: StyleKey) => `${k.theme}|${k.dense}|${k.layered}`;
const styleFor = (k: StyleKey) => graphStylesheet(k.theme, { dense: k.dense, layered: k.layered });

/** isDense: thousands of nodes and no groups; see LAYER_ABOVE. */
function isDense(model: GraphModel): boolean {
  return model.nodes.length > LAYER_ABOVE && !model.nodes.some((n) => n.type === 'group');
}

/** packComponents moves disconnected parts of the graph apart; fcose alone may lay them on top of each other. */
function packComponents(cy: Core): void {
  const components = cy.elements().components();
  if (components.length < 2) return;
  const boxes: Box[] = components.map((c, i) => {
    const bb = c.boundingBox({ includeLabels: true });
    return { id: String(i), x1: bb.x1, y1: bb.y1, w: bb.w, h: bb.h };
  });
  const moves = packBoxes(boxes, 90);
  cy.batch(() => {
    components.forEach((c, i) => {
      const d = moves.get(String(i));
      if (d)
        c.nodes()
          .filter((n) => !n.isParent())
          .shift(d);
    });
  });
}
