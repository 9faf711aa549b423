import { kindOfKey, nameOfKey } from '@/lib/model/keys';
import { shortKind } from '../graph/model';

/** One stored transition as GET /api/v1/objects returns it in `timeline` (docs/history.md). */
export interface TimelineTransition {
  id: number;
  at: number;
  type: string;
  object: string;
  state: string;
  reason?: string;
  message?: string;
  related?: string;
  manager?: string;
  controller?: string;
}

const short = (key: string) => `${shortKind(kindOfKey(key))} ${nameOfKey(key)}`;

/**
 * describeStored says what a stored transition means in a few words, as the
 * timeline shows it: "Secret db-password deleted (by kubectl-client-side-apply)",
 * "Pod web NotFound", "Pod web started naming Secret db-password".
 */
export function describeStored(t: TimelineTransition): string {
  const by = t.manager ? ` (by ${t.manager})` : '';
  switch (t.type) {
    case 'referent': {
      const what = t.state === 'NotFound' ? 'deleted' : t.state === 'Ready' ? 'Ready' : t.state;
      const down = t.reason === 'WhileDown' ? ' while refwatch was down' : '';
      return `${short(t.object)} ${what}${down}${by}`;
    }
    case 'referrer':
      return `${short(t.object)} ${t.state}${t.related ? ` on ${short(t.related)}` : ''}`;
    case 'reference':
      return `${short(t.object)} ${t.state === 'Added' ? 'started naming' : 'stopped naming'} ${t.related ? short(t.related) : '?'}`;
    default:
      return `${short(t.object)} ${t.state}${t.message ? `: ${t.message}` : ''}`;
  }
}
