// The demo API's shapes are shared with the server through lib/demo/wire (types and pure helpers only).
export { DEMO_MODES, isActivePhase } from '@/lib/demo/wire';
export type { DanglingKind, DemoMode, DemoRunView, ModeResult, Percentiles, RunPhase } from '@/lib/demo/wire';
