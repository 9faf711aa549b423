'use client';

import { useMemo, useRef } from 'react';
import type { Snapshot } from '@/lib/changelog/wire';
import { facetsOf, filterModel, sameFacets, type Facets, type GraphFilters } from '../graph/filtering';
import { groupModel, regroupModel, type GroupBy, type GroupedModel } from '../graph/grouping';
import { updateModel, type ModelState } from '../graph/incremental';
import type { GraphModel } from '../graph/model';

const EMPTY: GraphModel = { nodes: [], edges: [] };

export interface GraphModels {
  model: GraphModel;
  facets: Facets;
  filtered: GraphModel & { matched: number };
  grouped: GroupedModel;
}

/**
 * useGraphModel runs the pure pipeline snapshot → model → filter → group,
 * carrying the previous result of each stage into the next render: a
 * status-only change patches the model and its groups (unchanged nodes and
 * edges stay the same objects, which is what lets the graph and the table
 * skip them), anything structural rebuilds.
 */
export function useGraphModel(
  snapshot: Snapshot | undefined,
  now: number,
  filters: GraphFilters,
  by: GroupBy,
  expanded: ReadonlySet<string>,
): GraphModels {
  const stateRef = useRef<ModelState | undefined>(undefined);
  const model = useMemo(() => {
    if (!snapshot) {
      stateRef.current = undefined;
      return EMPTY;
    }
    const next = updateModel(stateRef.current, snapshot, { now });
    stateRef.current = next;
    return next.model;
  }, [snapshot, now]);

  const facetsRef = useRef<Facets | undefined>(undefined);
  const facets = useMemo(() => {
    const next = facetsOf(model);
    // Same values, same object: the toolbar's menus need not re-render on a status change.
    if (facetsRef.current && sameFacets(facetsRef.current, next)) return facetsRef.current;
    facetsRef.current = next;
    return next;
  }, [model]);

  const filtered = useMemo(() => filterModel(model, filters), [model, filters]);

  const groupRef = useRef<
    { input: GraphModel; by: GroupBy; expanded: ReadonlySet<string>; output: GroupedModel } | undefined
  >(undefined);
  const grouped = useMemo(() => {
    const prev = groupRef.current;
    const opts = { by, expanded };
    const output =
      prev && prev.by === by && prev.expanded === expanded
        ? regroupModel(prev.output, prev.input, filtered, opts)
        : groupModel(filtered, opts);
    groupRef.current = { input: filtered, by, expanded, output };
    return output;
  }, [filtered, by, expanded]);

  return { model, facets, filtered, grouped };
}
