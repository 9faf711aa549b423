import type { Manager } from '../engine';

/** DiagnosisSource is the part of a Manager that diagnosis reads; it never writes to any of it. */
export type DiagnosisSource = Pick<
  Manager,
  'registry' | 'changelog' | 'referenceControllers' | 'controllerNames' | 'controller'
>;
